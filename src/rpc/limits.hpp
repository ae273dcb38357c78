// Every limit the rpc layer puts on a peer, named with its reason, and the per-session options
// built from them. A peer that passes a limit loses its connection; nothing here is a quota.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lattice::rpc {

// Bytes in one Cap'n Proto word; frames are whole words.
constexpr uint64_t kWordBytes = 8;

// The largest frame we accept or send. A fence's merged store travels in chunks, but a chunk of
// a large job's store can still be tens of MiB; 64 MiB covers that for now (fence stores).
constexpr uint64_t kMaxMessageBytes = uint64_t{64} << 20;

// Cap'n Proto readers refuse 512 segments or more; refusing at the header spares buffering a
// message that would be rejected anyway.
constexpr uint32_t kMaxSegments = 512;

// Words a handler may traverse in one message: twice the largest message, so a handler can read
// a maximal message through twice (validate, then copy), while a message built of shared or
// repeated pointers cannot make us read more than that.
constexpr uint64_t kTraversalLimitWords = 2 * kMaxMessageBytes / kWordBytes;

// ... and at most this many words per word of the message itself. capnp charges one word per
// element of a list of zero-sized structs, so without this a 200-byte frame could make a handler
// walk (and copy) 4 million empty fence entries within the limit above. Four passes cover
// validating, copying and logging a message; a real message never needs more.
constexpr uint64_t kTraversalWordsPerMessageWord = 4;

// Our schema nests at most 4 levels (Envelope > body > request > list > element); 16 leaves room
// for growth and still bounds the reader's recursion on a hostile message.
constexpr int kNestingLimit = 16;

// Error texts are for humans; a response built from a peer-supplied string stays this small, so
// an error response always fits a frame.
constexpr size_t kMaxErrorTextBytes = 4096;

// Messages through the sessions that share it (one process's links): what the admin socket
// and `lattice -v` show, and what the benchmarks count.
struct MessageCounts {
  uint64_t sent = 0;
  uint64_t received = 0;
};

struct SessionOptions {
  MessageCounts* counts = nullptr;  // must outlive the session
  uint64_t max_message_bytes = kMaxMessageBytes;
  uint64_t traversal_limit_words = kTraversalLimitWords;
  uint64_t traversal_words_per_message_word = kTraversalWordsPerMessageWord;
  int nesting_limit = kNestingLimit;
};

}  // namespace lattice::rpc
