// Key files: generated with mode 0600 and never overwritten; refused when group/other can
// reach them, when the size is wrong, or when the path is not a regular file.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "secure/cluster_key.hpp"

using namespace lattice::secure;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/lattice-key-test-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

}  // namespace

TEST_CASE("generate writes 32 bytes with mode 0600 and refuses to overwrite") {
  TempDir d;
  std::string f = d.path + "/cluster.key";
  REQUIRE(generate_key_file(f));
  struct stat st {};
  REQUIRE(::stat(f.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(st.st_size == 32);
  auto again = generate_key_file(f);
  REQUIRE_FALSE(again);
  CHECK(again.error().message.find("refusing to overwrite") != std::string::npos);
  auto key = ClusterKey::load(f);
  REQUIRE(key);
  CHECK(key->id().size() == 16);
}

TEST_CASE("two generated keys differ, and so do their ids") {
  TempDir d;
  REQUIRE(generate_key_file(d.path + "/a"));
  REQUIRE(generate_key_file(d.path + "/b"));
  auto a = ClusterKey::load(d.path + "/a");
  auto b = ClusterKey::load(d.path + "/b");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->id() != b->id());
}

TEST_CASE("a key readable by group or others is refused with the fix") {
  TempDir d;
  std::string f = d.path + "/k";
  REQUIRE(generate_key_file(f));
  ::chmod(f.c_str(), 0640);
  auto key = ClusterKey::load(f);
  REQUIRE_FALSE(key);
  CHECK(key.error().message.find("mode 0640") != std::string::npos);
  CHECK(key.error().message.find("chmod 600") != std::string::npos);
}

TEST_CASE("wrong sizes, directories, symlinks and missing files are refused") {
  TempDir d;
  std::string f = d.path + "/short";
  {
    std::ofstream out(f);
    out << "too short";
  }
  ::chmod(f.c_str(), 0600);
  auto key = ClusterKey::load(f);
  REQUIRE_FALSE(key);
  CHECK(key.error().message.find("holds 9 bytes") != std::string::npos);

  CHECK_FALSE(ClusterKey::load(d.path));
  CHECK_FALSE(ClusterKey::load(d.path + "/missing"));

  REQUIRE(generate_key_file(d.path + "/real"));
  REQUIRE(::symlink((d.path + "/real").c_str(), (d.path + "/link").c_str()) == 0);
  CHECK_FALSE(ClusterKey::load(d.path + "/link"));
}
