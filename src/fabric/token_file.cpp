#include "fabric/token_file.hpp"

#include <cstring>

#include "base/strings.hpp"
#include "secure/private_file.hpp"

namespace lattice::fabric {

Result<size_t> token_length(const uint8_t* bytes, size_t size) {
  size_t n = size;
  while (n > 0 && (bytes[n - 1] == '\n' || bytes[n - 1] == '\r')) --n;
  if (n == 0) return make_error("is empty");
  for (size_t i = 0; i < n; ++i)
    if (bytes[i] <= ' ' || bytes[i] > '~')
      return make_error(cat("holds a byte that cannot go into an HTTP header (at offset ", i, ")"));
  return n;
}

Result<secure::Secret> read_token_file(const std::string& path) {
  auto file = secure::read_private_file(path, "token file", kMaxTokenBytes);
  if (!file) return file.error();
  auto length = token_length(file->bytes.data(), file->size);
  if (!length) return make_error(cat("token file ", path, ' ', length.error().message));
  std::memset(file->bytes.data() + *length, 0, file->bytes.size() - *length);
  return std::move(file->bytes);
}

secure::Secret authorization_header(const secure::Secret& token) {
  static constexpr char kPrefix[] = "Authorization: Bearer ";
  const size_t prefix = sizeof kPrefix - 1;
  const size_t length = ::strnlen(reinterpret_cast<const char*>(token.data()), token.size());
  secure::Secret header(prefix + length + 1);  // zeroed: the NUL is there
  std::memcpy(header.data(), kPrefix, prefix);
  std::memcpy(header.data() + prefix, token.data(), length);
  return header;
}

}  // namespace lattice::fabric
