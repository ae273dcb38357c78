#include "pmix/app_setup_codec.hpp"

#include <doctest/doctest.h>

using namespace lattice;
using namespace lattice::pmix;

namespace {
std::string error_of(std::string_view bytes) {
  auto decoded = decode_app_setup(bytes);
  REQUIRE_FALSE(decoded);
  return decoded.error().message;
}
}  // namespace

TEST_CASE("PMIx setup data: what is encoded decodes the same") {
  std::vector<SetupEntry> entries{{"pmix.envar.set", {{"PMIX_MCA_a", "1", ':'}}},
                                  {"k", {{"B", std::string(300, 'v'), ';'}, {"C", "", ':'}}},
                                  {"empty", {}}};
  auto bytes = encode_app_setup(entries);
  auto back = decode_app_setup(bytes);
  REQUIRE_MESSAGE(back, back.error().message);
  CHECK(*back == entries);
  CHECK(decode_app_setup(encode_app_setup({}))->empty());
}

TEST_CASE("PMIx setup data: bounds and malformed input are errors that say so") {
  auto good = encode_app_setup({{"pmix.envar.set", {{"PMIX_MCA_a", "1", ':'}}}});
  CHECK(error_of("") == "PMIx setup data in an unknown form (not Lattice's LPS1)");
  CHECK(error_of("LPSX\0\0\0\0") == "PMIx setup data in an unknown form (not Lattice's LPS1)");
  CHECK(error_of(std::string("LPS1") + std::string(kMaxAppSetupBytes, '\0')) ==
        "PMIx setup data of 65540 bytes (at most 65536)");
  CHECK(error_of("LPS1") == "PMIx setup data ends inside its entry count");
  CHECK(error_of(std::string("LPS1\x40\0\0\0", 8)) ==
        "PMIx setup data of 1073741824 entries (at most 16)");
  for (size_t cut = 4; cut < good.size(); ++cut)
    CHECK(error_of(good.substr(0, cut)).rfind("PMIx setup data ends inside ", 0) == 0);
  CHECK(error_of(good + "x") == "PMIx setup data with bytes after its last entry");
  // A claimed length past the end keeps nothing.
  CHECK(error_of(std::string("LPS1\0\0\0\1\xff\xff\xff\xff", 12)) ==
        "PMIx setup data ends inside an entry's key");
  CHECK(error_of(encode_app_setup({{"", {}}})) ==
        "PMIx setup data with an entry key that is empty or not text");
  CHECK(error_of(encode_app_setup({{"k", {{"A=B", "1", ':'}}}})) ==
        "PMIx setup data under k with a variable name that is empty or not a name");
  CHECK(error_of(encode_app_setup({{"k", {{"", "1", ':'}}}})) ==
        "PMIx setup data under k with a variable name that is empty or not a name");
  CHECK(error_of(encode_app_setup({{"k", {{"A", std::string("a\0b", 3), ':'}}}})) ==
        "PMIx setup data: A's value holds a NUL");
  std::vector<SetupEnvar> many(kMaxAppSetupEnvars + 1, SetupEnvar{"A", "", ':'});
  CHECK(error_of(encode_app_setup({{"k", many}})) ==
        "PMIx setup data that sets more than 256 variables");
}
