// Records over crypto_secretstream_xchacha20poly1305. The stream states hold key material and
// live in guarded memory (Secret); the derived traffic key is only read at construction.
#include "secure/record.hpp"

#include <sodium.h>

#include <algorithm>
#include <optional>

#include "base/strings.hpp"

namespace lattice::secure {
namespace {

using StreamState = crypto_secretstream_xchacha20poly1305_state;
constexpr size_t kAbytes = crypto_secretstream_xchacha20poly1305_ABYTES;
static_assert(kStreamHeaderBytes == crypto_secretstream_xchacha20poly1305_HEADERBYTES);
static_assert(kRecordOverhead == 4 + kAbytes);
constexpr size_t kMaxSealed = kMaxRecordPlaintext + kAbytes;

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

}  // namespace

struct RecordWriter::State {
  Secret stream{sizeof(StreamState)};
  std::string header;  // sent before the first record, then cleared
  bool closed = false;
  StreamState* st() { return reinterpret_cast<StreamState*>(stream.data()); }
};

RecordWriter::RecordWriter(const Secret& key) : s_(std::make_unique<State>()) {
  s_->header.resize(kStreamHeaderBytes);
  crypto_secretstream_xchacha20poly1305_init_push(
      s_->st(), reinterpret_cast<uint8_t*>(s_->header.data()), key.data());
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
  unsigned long long written = 0;
  crypto_secretstream_xchacha20poly1305_push(
      s_->st(), reinterpret_cast<uint8_t*>(&out[at + 4]), &written,
      reinterpret_cast<const uint8_t*>(plaintext.data()), plaintext.size(),
      reinterpret_cast<const uint8_t*>(&out[at]), 4,
      final ? crypto_secretstream_xchacha20poly1305_TAG_FINAL
            : crypto_secretstream_xchacha20poly1305_TAG_MESSAGE);
  if (final) s_->closed = true;
}

void RecordWriter::seal(std::string_view plaintext, std::string& out) {
  out.reserve(out.size() + kStreamHeaderBytes + plaintext.size() +
              (plaintext.size() / kMaxRecordPlaintext + 1) * kRecordOverhead);
  while (!plaintext.empty()) {
    size_t take = std::min(plaintext.size(), kMaxRecordPlaintext);
    push(plaintext.substr(0, take), false, out);
    plaintext.remove_prefix(take);
  }
}

void RecordWriter::seal_final(std::string& out) { push({}, true, out); }

struct RecordReader::State {
  Secret stream{sizeof(StreamState)};
  Secret key{32};
  bool have_header = false;
  bool finished = false;
  std::optional<Error> failed;
  std::string pending;  // a partial header or record
  StreamState* st() { return reinterpret_cast<StreamState*>(stream.data()); }

  Status fail(std::string why) {
    failed = make_error(std::move(why));
    key.wipe();
    return *failed;
  }

  // One complete record (length prefix included) -> plaintext.
  Status open(std::string_view record, std::string& out) {
    if (finished) return fail("data after the peer's final record");
    size_t sealed = record.size() - 4;
    size_t at = out.size();
    out.resize(at + sealed - kAbytes);
    unsigned long long plain_len = 0;
    unsigned char tag = 0;
    if (crypto_secretstream_xchacha20poly1305_pull(
            st(), reinterpret_cast<uint8_t*>(&out[at]), &plain_len, &tag,
            reinterpret_cast<const uint8_t*>(record.data()) + 4, sealed,
            reinterpret_cast<const uint8_t*>(record.data()), 4) != 0) {
      out.resize(at);
      return fail(
          "a sealed record failed authentication (tampered, replayed, reordered or "
          "truncated)");
    }
    out.resize(at + static_cast<size_t>(plain_len));
    if (tag == crypto_secretstream_xchacha20poly1305_TAG_FINAL) finished = true;
    return {};
  }
};

RecordReader::RecordReader(const Secret& key) : s_(std::make_unique<State>()) {
  std::copy(key.data(), key.data() + 32, s_->key.data());
}

RecordReader::~RecordReader() = default;

bool RecordReader::finished() const { return s_->finished; }
size_t RecordReader::buffered() const { return s_->pending.size(); }

Status RecordReader::read(std::string_view in, std::string& out) {
  State& s = *s_;
  if (s.failed) return *s.failed;
  while (!in.empty()) {
    if (!s.have_header) {
      size_t take = std::min(kStreamHeaderBytes - s.pending.size(), in.size());
      s.pending.append(in.data(), take);
      in.remove_prefix(take);
      if (s.pending.size() < kStreamHeaderBytes) return {};
      crypto_secretstream_xchacha20poly1305_init_pull(
          s.st(), reinterpret_cast<const uint8_t*>(s.pending.data()), s.key.data());
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
