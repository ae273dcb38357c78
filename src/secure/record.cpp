// Records under either cipher (record.hpp has the format). Cipher state and keys live in
// guarded memory (Secret); the GCM key is expanded per record by libsodium's one-shot calls,
// which wipe the expansion: keeping it would cost a guarded 512-byte block per direction of
// every link, and expanding costs ~0.06 µs a record here.
#include "secure/record.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "base/strings.hpp"

namespace lattice::secure {
namespace {

using StreamState = crypto_secretstream_xchacha20poly1305_state;
constexpr size_t kAbytes = crypto_secretstream_xchacha20poly1305_ABYTES;
constexpr size_t kStreamHeader = crypto_secretstream_xchacha20poly1305_HEADERBYTES;
// A GCM body is a flag byte and a tag around the ciphertext: as long as a secretstream body.
static_assert(1 + crypto_aead_aes256gcm_ABYTES == kAbytes);
static_assert(crypto_aead_aes256gcm_KEYBYTES == 32);
static_assert(kRecordOverhead == 4 + kAbytes);
constexpr size_t kMaxSealed = kMaxRecordPlaintext + kAbytes;
constexpr uint8_t kGcmMessage = 0, kGcmFinal = 1;

void put_be32(char* p, size_t v) {
  p[0] = static_cast<char>((v >> 24) & 0xff);
  p[1] = static_cast<char>((v >> 16) & 0xff);
  p[2] = static_cast<char>((v >> 8) & 0xff);
  p[3] = static_cast<char>(v & 0xff);
}

size_t get_be32(const char* p) {
  auto b = [&](int i) { return static_cast<size_t>(static_cast<uint8_t>(p[i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

// Record number `n` of a direction as its GCM nonce (big-endian in the last 8 bytes). Each
// direction of each link has its own key, so numbering from 0 never repeats a (key, nonce).
void gcm_nonce(uint64_t n, uint8_t out[crypto_aead_aes256gcm_NPUBBYTES]) {
  std::fill(out, out + crypto_aead_aes256gcm_NPUBBYTES, uint8_t{0});
  for (int i = 0; i < 8; ++i)
    out[crypto_aead_aes256gcm_NPUBBYTES - 1 - i] = static_cast<uint8_t>(n >> (8 * i));
}

const uint8_t* u8(const char* p) { return reinterpret_cast<const uint8_t*>(p); }
uint8_t* u8(char* p) { return reinterpret_cast<uint8_t*>(p); }

}  // namespace

Ciphers local_ciphers() {
  if (!initialize()) std::abort();
  auto ciphers = static_cast<Ciphers>(Cipher::xchacha20poly1305);
  if (crypto_aead_aes256gcm_is_available())
    ciphers = static_cast<Ciphers>(ciphers | static_cast<Ciphers>(Cipher::aes256gcm));
  return ciphers;
}

std::optional<Cipher> choose_cipher(Ciphers a, Ciphers b) {
  for (Cipher c : {Cipher::aes256gcm, Cipher::xchacha20poly1305})
    if (a & b & static_cast<Ciphers>(c)) return c;
  return std::nullopt;
}

const char* cipher_name(Cipher cipher) {
  return cipher == Cipher::aes256gcm ? "AES-256-GCM" : "XChaCha20-Poly1305";
}

size_t stream_header_bytes(Cipher cipher) {
  return cipher == Cipher::aes256gcm ? 0 : kStreamHeader;
}

struct RecordWriter::State {
  explicit State(Cipher c) : cipher(c) {}
  Cipher cipher;
  Secret stream{sizeof(StreamState)};  // secretstream: its state; GCM: the key
  uint64_t sealed = 0;                 // GCM: records sealed so far
  std::string header;                  // sent before the first record, then cleared
  bool closed = false;
  StreamState* st() { return reinterpret_cast<StreamState*>(stream.data()); }
};

RecordWriter::RecordWriter(const Secret& key, Cipher cipher) : s_(std::make_unique<State>(cipher)) {
  if (cipher == Cipher::aes256gcm) {
    std::copy(key.data(), key.data() + crypto_aead_aes256gcm_KEYBYTES, s_->stream.data());
    return;
  }
  s_->header.resize(kStreamHeader);
  crypto_secretstream_xchacha20poly1305_init_push(s_->st(), u8(s_->header.data()), key.data());
}

RecordWriter::~RecordWriter() = default;

void RecordWriter::push(std::string_view plaintext, bool final, std::string& out) {
  if (s_->closed) return;
  if (!s_->header.empty()) {
    out += s_->header;
    s_->header.clear();
  }
  size_t sealed = plaintext.size() + kAbytes;
  size_t at = out.size();
  out.resize(at + 4 + sealed);
  put_be32(&out[at], sealed);
  char* body = &out[at + 4];
  if (s_->cipher == Cipher::aes256gcm) {
    // Additional data: the length and the flag, the 5 bytes before the ciphertext.
    body[0] = static_cast<char>(final ? kGcmFinal : kGcmMessage);
    uint8_t nonce[crypto_aead_aes256gcm_NPUBBYTES];
    gcm_nonce(s_->sealed++, nonce);
    crypto_aead_aes256gcm_encrypt_detached(u8(body + 1), u8(body + 1 + plaintext.size()), nullptr,
                                           u8(plaintext.data()), plaintext.size(), u8(&out[at]), 5,
                                           nullptr, nonce, s_->stream.data());
  } else {
    crypto_secretstream_xchacha20poly1305_push(
        s_->st(), u8(body), nullptr, u8(plaintext.data()), plaintext.size(), u8(&out[at]), 4,
        final ? crypto_secretstream_xchacha20poly1305_TAG_FINAL
              : crypto_secretstream_xchacha20poly1305_TAG_MESSAGE);
  }
  if (final) s_->closed = true;
}

void RecordWriter::seal(std::string_view plaintext, std::string& out) {
  out.reserve(out.size() + s_->header.size() + plaintext.size() +
              (plaintext.size() / kMaxRecordPlaintext + 1) * kRecordOverhead);
  while (!plaintext.empty()) {
    size_t take = std::min(plaintext.size(), kMaxRecordPlaintext);
    push(plaintext.substr(0, take), false, out);
    plaintext.remove_prefix(take);
  }
}

void RecordWriter::seal_final(std::string& out) { push({}, true, out); }

struct RecordReader::State {
  explicit State(Cipher c) : cipher(c), have_header(c == Cipher::aes256gcm) {}
  Cipher cipher;
  Secret stream{sizeof(StreamState)};  // secretstream: its state; GCM: the key
  Secret key{32};                      // secretstream: the key, until the stream header
  uint64_t opened = 0;                 // GCM: records opened so far
  bool have_header;
  bool finished = false;
  std::optional<Error> failed;
  std::string pending;  // a partial header or record
  StreamState* st() { return reinterpret_cast<StreamState*>(stream.data()); }

  Status fail(std::string why) {  // the stream is dead: nothing of its keys is kept
    failed = make_error(std::move(why));
    key.wipe();
    stream.wipe();
    return *failed;
  }

  // One complete record (length prefix included) -> plaintext.
  Status open(std::string_view record, std::string& out) {
    if (finished) return fail("data after the peer's final record");
    const size_t plain = record.size() - 4 - kAbytes;
    const size_t at = out.size();
    out.resize(at + plain);
    bool opened_ok = false, final = false, known = false;
    uint8_t mark = 0;  // the record's flag (GCM) or tag (secretstream)
    if (cipher == Cipher::aes256gcm) {
      const char* body = record.data() + 4;
      uint8_t nonce[crypto_aead_aes256gcm_NPUBBYTES];
      gcm_nonce(opened, nonce);
      opened_ok = crypto_aead_aes256gcm_decrypt_detached(u8(&out[at]), nullptr, u8(body + 1), plain,
                                                         u8(body + 1 + plain), u8(record.data()), 5,
                                                         nonce, stream.data()) == 0;
      ++opened;
      mark = static_cast<uint8_t>(body[0]);
      final = mark == kGcmFinal;
      known = final || mark == kGcmMessage;
    } else {
      unsigned char tag = 0;
      opened_ok = crypto_secretstream_xchacha20poly1305_pull(
                      st(), u8(&out[at]), nullptr, &tag, u8(record.data() + 4), record.size() - 4,
                      u8(record.data()), 4) == 0;
      mark = tag;
      final = tag == crypto_secretstream_xchacha20poly1305_TAG_FINAL;
      known = final || tag == crypto_secretstream_xchacha20poly1305_TAG_MESSAGE;
    }
    if (!opened_ok) {
      out.resize(at);
      return fail(
          "a sealed record failed authentication (tampered, replayed, reordered or "
          "truncated)");
    }
    if (!known) {  // authenticated, so a key holder's: still not what any writer sends
      out.resize(at);
      return fail(cat("a sealed record marked ", int{mark}, ", which no writer sends"));
    }
    if (final) finished = true;
    return {};
  }
};

RecordReader::RecordReader(const Secret& key, Cipher cipher) : s_(std::make_unique<State>(cipher)) {
  std::copy(key.data(), key.data() + 32,
            cipher == Cipher::aes256gcm ? s_->stream.data() : s_->key.data());
}

RecordReader::~RecordReader() = default;

bool RecordReader::finished() const { return s_->finished; }
size_t RecordReader::buffered() const { return s_->pending.size(); }

Status RecordReader::read(std::string_view in, std::string& out) {
  State& s = *s_;
  if (s.failed) return *s.failed;
  while (!in.empty()) {
    if (!s.have_header) {
      size_t take = std::min(kStreamHeader - s.pending.size(), in.size());
      s.pending.append(in.data(), take);
      in.remove_prefix(take);
      if (s.pending.size() < kStreamHeader) return {};
      crypto_secretstream_xchacha20poly1305_init_pull(s.st(), u8(s.pending.data()), s.key.data());
      s.key.wipe();
      s.pending.clear();
      s.have_header = true;
      continue;
    }
    // The length first (from the input when nothing is pending), then the body.
    size_t sealed = 0;
    if (s.pending.empty() && in.size() >= 4) {
      sealed = get_be32(in.data());
    } else {
      if (s.pending.size() < 4) {
        size_t take = std::min(4 - s.pending.size(), in.size());
        s.pending.append(in.data(), take);
        in.remove_prefix(take);
        if (s.pending.size() < 4) return {};
      }
      sealed = get_be32(s.pending.data());
    }
    if (sealed < kAbytes || sealed > kMaxSealed)
      return s.fail(cat("a sealed record claims ", sealed, " bytes (limit ", kMaxSealed, ")"));
    size_t whole = 4 + sealed;
    if (s.pending.empty() && in.size() >= whole) {  // the common case: no copy
      if (auto st = s.open(in.substr(0, whole), out); !st) return st;
      in.remove_prefix(whole);
      continue;
    }
    size_t take = std::min(whole - s.pending.size(), in.size());
    s.pending.append(in.data(), take);
    in.remove_prefix(take);
    if (s.pending.size() < whole) return {};
    auto st = s.open(s.pending, out);
    s.pending.clear();
    if (!st) return st;
  }
  return {};
}

}  // namespace lattice::secure
