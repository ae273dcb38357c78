// Sealed records: after the handshake each direction of a link is one libsodium secretstream
// (XChaCha20-Poly1305 with an implicit counter): a 24-byte stream header once, then records
//   u32 big-endian length of the sealed body | sealed body (plaintext + 17 bytes)
// with the length bytes as additional data. Tampering, replay, reordering or a dropped record
// breaks authentication; a clean close ends with a FINAL record, so truncation shows as EOF
// without it. Plaintext per record is bounded, so a reader buffers at most one record.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "secure/secret.hpp"

namespace lattice::secure {

constexpr size_t kMaxRecordPlaintext = 64 * 1024;
constexpr size_t kStreamHeaderBytes = 24;
constexpr size_t kRecordOverhead = 4 + 17;

class RecordWriter {
 public:
  explicit RecordWriter(const Secret& key);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends `plaintext` as records (split at kMaxRecordPlaintext) to `out`; the stream header
  // goes out before the first record.
  void seal(std::string_view plaintext, std::string& out);
  // The closing record; nothing may be sealed after it.
  void seal_final(std::string& out);

 private:
  void push(std::string_view plaintext, bool final, std::string& out);
  struct State;
  std::unique_ptr<State> s_;
};

class RecordReader {
 public:
  explicit RecordReader(const Secret& key);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // Opens every whole record at the front of `in` (consuming it) and appends the plaintext to
  // `out`; a partial record is kept for the next call. An error means the stream is broken;
  // later calls return it again.
  Status read(std::string_view in, std::string& out);
  bool finished() const;  // the peer's FINAL record arrived
  size_t buffered() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace lattice::secure
