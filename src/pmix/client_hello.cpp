#include "pmix/client_hello.hpp"

#include <arpa/inet.h>

#include <cstring>

#include "base/strings.hpp"

namespace lattice::pmix {
namespace {

// A reader over the bytes after the header, in libpmix's field order.
class Fields {
 public:
  explicit Fields(std::string_view bytes) : rest_(bytes) {}
  bool text(std::string& out) {
    size_t end = rest_.find('\0');
    if (end == std::string_view::npos) return false;
    out.assign(rest_.substr(0, end));
    rest_.remove_prefix(end + 1);
    return true;
  }
  bool u32(uint32_t& out) {  // network byte order
    if (rest_.size() < 4) return false;
    uint32_t be;
    std::memcpy(&be, rest_.data(), 4);
    out = ntohl(be);
    rest_.remove_prefix(4);
    return true;
  }
  bool u8(uint8_t& out) {
    if (rest_.empty()) return false;
    out = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return true;
  }
  bool blob(size_t n, std::string& out) {
    if (rest_.size() < n) return false;
    out.assign(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return true;
  }

 private:
  std::string_view rest_;
};

// Field 3 of the header: the bytes that follow it, in the client's byte order (ours: it runs on
// this host).
uint32_t body_bytes(std::string_view header) {
  uint32_t n;
  std::memcpy(&n, header.data() + 8, sizeof n);
  return n;
}

bool is_version_2_0(const std::string& version) {
  return starts_with(version, "2.0.") || version == "2.0";
}

}  // namespace

Result<size_t> hello_size(std::string_view header) {
  if (header.size() < kHelloHeaderBytes) return make_error("a PMIx handshake header is 16 bytes");
  uint64_t total = uint64_t{kHelloHeaderBytes} + body_bytes(header);
  if (total > kMaxHelloBytes)
    return make_error(
        cat("a PMIx handshake of ", total, " bytes (at most ", kMaxHelloBytes, " are read)"));
  return static_cast<size_t>(total);
}

Result<ClientHello> decode_hello(std::string_view bytes) {
  auto size = hello_size(bytes);
  if (!size) return size.error();
  if (bytes.size() != *size) return make_error("a PMIx handshake of the wrong length");
  Fields f(bytes.substr(kHelloHeaderBytes));
  ClientHello h;
  uint32_t cred_len = 0;
  if (!f.text(h.psec) || !f.u32(cred_len) || !f.blob(cred_len, h.credential) || !f.u8(h.flag))
    return make_error("a malformed PMIx handshake (security fields)");
  if (h.flag != kSimpleClient)
    return make_error(cat("a PMIx tool or launcher (type ", int{h.flag},
                          "): only a launch's ranks connect here"));
  if (!f.text(h.nspace) || !f.u32(h.rank) || !f.text(h.version))
    return make_error("a malformed PMIx handshake (identity fields)");
  if (is_version_2_0(h.version)) return h;  // its handshake ends with the version
  uint8_t buffer_type = 0;
  if (!f.text(h.bfrops) || !f.u8(buffer_type) || !f.text(h.gds))
    return make_error("a malformed PMIx handshake (module fields)");
  return h;
}

Result<NativeCredential> native_credential(std::string_view credential) {
  if (credential.size() != 8)
    return make_error(cat("a native credential of ", credential.size(), " bytes (8 expected)"));
  NativeCredential c;
  std::memcpy(&c.uid, credential.data(), 4);
  std::memcpy(&c.gid, credential.data() + 4, 4);
  return c;
}

}  // namespace lattice::pmix
