// Sealed records: after the handshake each direction of a link is a stream of records
//   u32 big-endian length of the sealed body | sealed body (plaintext + 17 bytes)
// with the length bytes as additional data, under the cipher the handshake chose:
// - xchacha20poly1305: a libsodium secretstream (24-byte stream header once; the final flag
//   travels sealed inside the body);
// - aes256gcm: AES-256-GCM with the record's number as its nonce (no header; the body is the
//   final flag, in clear but authenticated, then the ciphertext and a 16-byte tag).
// Either way a record's place in the stream is part of its authentication: tampering, replay,
// reordering or a dropped record breaks the stream. A clean close ends with a FINAL record, so
// truncation shows as EOF without it. Plaintext per record is bounded, so a reader buffers at
// most one record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "secure/secret.hpp"

namespace lattice::secure {

constexpr size_t kMaxRecordPlaintext = 64 * 1024;
constexpr size_t kRecordOverhead = 4 + 17;

// The record ciphers, as the bits the handshake offers them by. XChaCha20-Poly1305 runs
// everywhere; AES-256-GCM only where the CPU has AES-NI and CLMUL (libsodium's requirement),
// and there it costs about half as much per byte and a third per small record.
enum class Cipher : uint8_t { xchacha20poly1305 = 1, aes256gcm = 2 };
using Ciphers = uint8_t;  // a set of Cipher bits
Ciphers local_ciphers();  // what this machine can run
// The cipher two offers share, preferring AES-256-GCM; none when they share nothing.
std::optional<Cipher> choose_cipher(Ciphers a, Ciphers b);
const char* cipher_name(Cipher cipher);
// Bytes a direction sends before its first record.
size_t stream_header_bytes(Cipher cipher);

class RecordWriter {
 public:
  RecordWriter(const Secret& key, Cipher cipher);
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
  RecordReader(const Secret& key, Cipher cipher);
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
