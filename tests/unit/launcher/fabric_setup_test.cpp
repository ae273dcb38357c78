// Where a launch's CXI settings come from: flags over the launcher's config file; no VNI, no
// CXI; a VNI without a fabric manager or token refused before anything starts.
#include "launcher/fabric_setup.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "launcher/launcher_file.hpp"

using namespace lattice::launcher;

namespace {
struct Files {
  std::string dir;
  Files() {
    const char* tmp = std::getenv("TMPDIR");
    dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/fabric-setup-XXXXXX";
    REQUIRE(::mkdtemp(dir.data()));
  }
  ~Files() { std::system(("rm -rf '" + dir + "'").c_str()); }
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0600) {
    std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
};

// As a launch does it: the file read once, then the fabric settings taken from it.
lattice::Result<FabricSetup> setup(const LaunchOptions& o, const char* config_env) {
  auto file = load_launcher_file(o, config_env);
  if (!file) return file.error();
  return fabric_setup(o, *file);
}
}  // namespace

TEST_CASE("fabric setup: no VNI, no CXI (said why)") {
  LaunchOptions o;
  auto none = setup(o, nullptr);
  REQUIRE(none);
  CHECK_FALSE(none->token);
  CHECK(none->note.find("no fabric manager configured") != std::string::npos);
  o.fabric_url = "http://fm";
  CHECK(setup(o, nullptr)->note.find("no VNI") != std::string::npos);
}

TEST_CASE("fabric setup: flags over the config file, the token read") {
  Files f;
  std::string token = f.write("token", "secret-token\n");
  std::string config =
      f.write("launcher.yaml", "fabric:\n  url: http://from-file:1\n  token_file: " + token +
                                   "\n  vni: 12\n  attempts: 2\n");
  LaunchOptions o;
  auto from_env = setup(o, config.c_str());  // $LATTICE_LAUNCHER_CONFIG
  REQUIRE_MESSAGE(from_env, from_env.error().message);
  REQUIRE(from_env->token);
  CHECK(std::strcmp(reinterpret_cast<const char*>(from_env->token->data()), "secret-token") == 0);
  CHECK(from_env->settings.vni == 12);
  CHECK(from_env->settings.client.url == "http://from-file:1");
  CHECK(from_env->settings.client.max_attempts == 2);
  o.config_file = config;
  o.vni = 40;
  o.fabric_url = "https://from-flag:2";
  auto flags = setup(o, "/nonexistent.yaml");  // --config wins over the variable
  REQUIRE_MESSAGE(flags, flags.error().message);
  CHECK(flags->settings.vni == 40);
  CHECK(flags->settings.client.url == "https://from-flag:2");
}

TEST_CASE("fabric setup: a VNI without a fabric manager, a token, or a private token file") {
  Files f;
  LaunchOptions o;
  o.vni = 5;
  auto no_url = setup(o, nullptr);
  REQUIRE_FALSE(no_url);
  CHECK(no_url.error().message.find("--vni 5 needs the fabric manager") != std::string::npos);
  o.fabric_url = "http://fm";
  auto no_token = setup(o, nullptr);
  REQUIRE_FALSE(no_token);
  CHECK(no_token.error().message.find("--fabric-token-file") != std::string::npos);
  o.fabric_token_file = f.write("open", "tok\n", 0644);
  auto open = setup(o, nullptr);
  REQUIRE_FALSE(open);
  CHECK(open.error().message.find("mode 0644") != std::string::npos);
  o.config_file = f.dir + "/missing.yaml";
  CHECK_FALSE(setup(o, nullptr));
}
