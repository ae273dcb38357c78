// Output files opened with the job's user's rights: as root, a link the user planted does not
// lend root's rights, nothing is made where the user could not make it, what is made is the
// user's, and the launcher's own identity is whole again afterwards.
#include "launcher/user_files.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace lattice::launcher;

namespace {

const JobUserInfo kNobody{65534, 65534, {}, "nobody"};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<gid_t> own_groups() {
  std::vector<gid_t> groups(static_cast<size_t>(::getgroups(0, nullptr)));
  groups.resize(static_cast<size_t>(::getgroups(static_cast<int>(groups.size()), groups.data())));
  return groups;
}

}  // namespace

TEST_CASE("as root, output files are opened with the job's user's rights only") {
  if (::geteuid() != 0) return;  // a user's launcher opens files as itself: nothing to lend
  char dir[] = "/tmp/lattice-userfilesXXXXXX";
  REQUIRE(::mkdtemp(dir));
  REQUIRE(::chmod(dir, 0755) == 0);  // nobody may pass, not write
  const std::string d = dir;
  const std::vector<gid_t> groups_before = own_groups();
  { std::ofstream(d + "/root-only") << "precious\n"; }
  REQUIRE(::chmod((d + "/root-only").c_str(), 0600) == 0);
  REQUIRE(::mkdir((d + "/theirs").c_str(), 0755) == 0);
  REQUIRE(::chown((d + "/theirs").c_str(), kNobody.uid, kNobody.gid) == 0);
  REQUIRE(::symlink((d + "/root-only").c_str(), (d + "/theirs/out.0").c_str()) == 0);

  // The planted link leads where nobody may not write: refused, named, the file untouched.
  auto linked = open_output_file(d + "/theirs/out.0", kNobody);
  REQUIRE(!linked);
  CHECK(linked.error().message ==
        "cannot open output file " + d + "/theirs/out.0 as user nobody: Permission denied");
  CHECK(slurp(d + "/root-only") == "precious\n");

  // A directory only root may write: nothing made there.
  auto in_root_dir = open_output_file(d + "/out.1", kNobody);
  CHECK(!in_root_dir);
  CHECK(::access((d + "/out.1").c_str(), F_OK) != 0);

  // Where the user may write: made, and theirs.
  auto made = open_output_file(d + "/theirs/out.2", kNobody);
  REQUIRE(made);
  CHECK(::write(made->get(), "x", 1) == 1);
  struct stat st {};
  REQUIRE(::stat((d + "/theirs/out.2").c_str(), &st) == 0);
  CHECK(st.st_uid == kNobody.uid);
  CHECK(st.st_gid == kNobody.gid);
  CHECK((::fcntl(made->get(), F_GETFD) & FD_CLOEXEC) != 0);
  CHECK((::fcntl(made->get(), F_GETFL) & O_NONBLOCK) == 0);

  // A FIFO without a reader fails at once instead of holding the loop.
  REQUIRE(::mkfifo((d + "/theirs/fifo").c_str(), 0666) == 0);
  REQUIRE(::chown((d + "/theirs/fifo").c_str(), kNobody.uid, kNobody.gid) == 0);
  CHECK(!open_output_file(d + "/theirs/fifo", kNobody));

  // The launcher is root again, with its own groups: a root-only place takes a file.
  auto own = open_output_file(d + "/out.3", JobUserInfo{0, 0, {}, "root"});
  CHECK(own);
  CHECK(own_groups() == groups_before);
  // A file read for the job (a spawn's hostfile): only what the user may read, regular, bounded.
  { std::ofstream(d + "/hosts") << "n1\nn2 slots=2\n"; }
  CHECK(*read_user_file(d + "/hosts", kNobody, 64) == "n1\nn2 slots=2\n");
  auto secret = read_user_file(d + "/root-only", kNobody, 64);
  REQUIRE(!secret);
  CHECK(secret.error().message ==
        "cannot open file " + d + "/root-only as user nobody: Permission denied");
  CHECK(secret.error().message.find("precious") == std::string::npos);
  CHECK(!read_user_file(d + "/hosts", kNobody, 8));         // over the bound
  CHECK(!read_user_file(d + "/theirs/fifo", kNobody, 64));  // no regular file, no wait
  CHECK(!read_user_file(d + "/theirs", kNobody, 64));
  CHECK(own_groups() == groups_before);
  for (const char* f :
       {"/theirs/out.0", "/theirs/out.2", "/theirs/fifo", "/out.3", "/root-only", "/hosts"})
    ::unlink((d + f).c_str());
  ::rmdir((d + "/theirs").c_str());
  ::rmdir(dir);
}
