// Token files: owner-only, one printable line, NUL-terminated in guarded memory.
#include "fabric/token_file.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

using namespace lattice::fabric;

namespace {
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text, mode_t mode = 0600) {
    const char* tmp = std::getenv("TMPDIR");
    path = std::string(tmp && *tmp ? tmp : "/tmp") + "/token-XXXXXX";
    int fd = ::mkstemp(path.data());
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fd);
    ::chmod(path.c_str(), mode);
  }
  ~TempFile() { ::unlink(path.c_str()); }
};
}  // namespace

TEST_CASE("a token file: one line, its newline dropped, NUL-terminated") {
  TempFile f("abc.DEF-123_xyz\n");
  auto token = read_token_file(f.path);
  REQUIRE_MESSAGE(token, token.error().message);
  CHECK(std::strcmp(reinterpret_cast<const char*>(token->data()), "abc.DEF-123_xyz") == 0);
}

TEST_CASE("the header the client keeps of a token: its whole Authorization line") {
  TempFile f("abc.DEF-123_xyz\n");
  auto token = read_token_file(f.path);
  REQUIRE(token);
  auto header = authorization_header(*token);
  CHECK(std::string(reinterpret_cast<const char*>(header.data())) ==
        "Authorization: Bearer abc.DEF-123_xyz");
  CHECK(header.size() == std::strlen("Authorization: Bearer abc.DEF-123_xyz") + 1);
}

TEST_CASE("token files others can read, empty ones and header-breaking bytes are refused") {
  TempFile open("tok\n", 0644);
  auto r = read_token_file(open.path);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find("mode 0644") != std::string::npos);
  CHECK(r.error().message.find("token file") != std::string::npos);
  TempFile empty("\n");
  CHECK_FALSE(read_token_file(empty.path));
  TempFile space("to ken\n");
  CHECK_FALSE(read_token_file(space.path));
  TempFile injection("tok\r\nX-Evil: 1\n");
  CHECK_FALSE(read_token_file(injection.path));
  CHECK_FALSE(read_token_file("/nonexistent/token"));
  TempFile big(std::string(kMaxTokenBytes + 1, 'a'));
  CHECK_FALSE(read_token_file(big.path));
}
