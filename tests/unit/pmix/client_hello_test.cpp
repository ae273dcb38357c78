// A PMIx client's connection handshake as libpmix's listener reads it: one captured from
// OpenPMIx 4.2.2's client (Debian's libpmix2, as Open MPI's ranks send it, claiming uid 1001 and
// gid 1002 for rank 3 of lattice.test-ns), and every way a sender could bend it.
#include "pmix/client_hello.hpp"

#include <doctest/doctest.h>

#include <string>

#include "base/strings.hpp"

namespace lattice::pmix {
namespace {

std::string captured() {
  return *from_hex(
      "ffffffffffffffff3c000000000000006e61746976650000000008e9030000ea030000006c6174746963652e"
      "746573742d6e730000000003342e322e32726332007634310001686173680000");
}

TEST_CASE("a real client's handshake") {
  std::string bytes = captured();
  REQUIRE(bytes.size() == 76);
  auto size = hello_size(bytes.substr(0, kHelloHeaderBytes));
  REQUIRE(size);
  CHECK(*size == 76);
  auto hello = decode_hello(bytes);
  REQUIRE_MESSAGE(hello, hello.error().message);
  CHECK(hello->psec == "native");
  CHECK(hello->flag == kSimpleClient);
  CHECK(hello->nspace == "lattice.test-ns");
  CHECK(hello->rank == 3);
  CHECK(hello->version == "4.2.2rc2");
  CHECK(hello->bfrops == "v41");
  CHECK(hello->gds == "hash");
  auto cred = native_credential(hello->credential);
  REQUIRE(cred);
  CHECK(cred->uid == 1001);
  CHECK(cred->gid == 1002);
}

TEST_CASE("sizes: a header says how much follows, and no more than a handshake needs is read") {
  CHECK(!hello_size("short"));
  std::string header = captured().substr(0, kHelloHeaderBytes);
  header[8] = '\xff';
  header[9] = '\xff';  // 65535 bytes to follow
  auto size = hello_size(header);
  REQUIRE(!size);
  CHECK(size.error().message.find("at most 4096") != std::string::npos);
}

TEST_CASE("whatever is cut short, or not a plain client's, is refused") {
  std::string bytes = captured();
  CHECK(!decode_hello(bytes.substr(0, 75)));  // the header says 76
  // Every shorter body the header agrees with.
  for (size_t body = 0; body + kHelloHeaderBytes < 75; ++body) {
    std::string cut = bytes.substr(0, kHelloHeaderBytes + body);
    cut[8] = static_cast<char>(body);
    cut[9] = 0;
    auto hello = decode_hello(cut);
    if (hello) CHECK(body >= 59);  // only the trailing blob may go missing
  }
  std::string tool = bytes;
  tool[16 + 7 + 4 + 8] = 3;  // the flag: a tool that wants an id
  auto refused = decode_hello(tool);
  REQUIRE(!refused);
  CHECK(refused.error().message.find("tool or launcher") != std::string::npos);
  std::string huge_cred = bytes;
  huge_cred[16 + 7 + 3] = 100;  // credential length 100: past the end
  CHECK(!decode_hello(huge_cred));
  CHECK(!native_credential("1234567"));
}

TEST_CASE("a 2.0 client's handshake ends with its version") {
  std::string body = std::string("native\0", 7) + std::string("\0\0\0\x08", 4) +
                     std::string("\x01\0\0\0\x02\0\0\0", 8) + std::string(1, '\0') +
                     std::string("ns\0", 3) + std::string("\0\0\0\x01", 4) +
                     std::string("2.0.3\0", 6);
  std::string header(16, '\0');
  header[8] = static_cast<char>(body.size());
  auto hello = decode_hello(header + body);
  REQUIRE_MESSAGE(hello, hello.error().message);
  CHECK(hello->version == "2.0.3");
  CHECK(hello->bfrops.empty());
  CHECK(hello->rank == 1);
}

}  // namespace
}  // namespace lattice::pmix
