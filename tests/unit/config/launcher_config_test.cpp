// The launcher's configuration file: the fabric keys, their checks, and the shipped example.
#include "config/launcher_config.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

using namespace lattice::config;

TEST_CASE("launcher config: the fabric keys, seconds into milliseconds") {
  auto c = parse_launcher_config(
      "fabric:\n  url: http://127.0.0.1:8000\n  token_file: /t\n  vni: 12\n"
      "  connect_timeout: 0.5\n  timeout: 3\n  attempts: 2\n",
      "launcher.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  CHECK(c->fabric_url == "http://127.0.0.1:8000");
  CHECK(c->fabric_token_file == "/t");
  CHECK(c->vni == 12);
  CHECK(c->fabric_connect_timeout_ms == 500);
  CHECK(c->fabric_timeout_ms == 3000);
  CHECK(c->fabric_attempts == 2);
  auto empty = parse_launcher_config("", "launcher.yaml");
  REQUIRE(empty);
  CHECK(empty->fabric_url.empty());
  CHECK(empty->vni == 0);
}

TEST_CASE("launcher config: the fence settings of its launches") {
  auto c = parse_launcher_config("fence:\n  fanout: 3\n  timeout: 2.5\n", "launcher.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  CHECK(c->fence_fanout == 3);
  CHECK(c->fence_timeout_ms == 2500);
  auto empty = parse_launcher_config("", "launcher.yaml");
  CHECK(empty->fence_fanout == kDefaultFanout);
  CHECK(empty->fence_timeout_ms == kDefaultFenceTimeoutMs);
  auto zero = parse_launcher_config("fence: {fanout: 0}\n", "launcher.yaml");
  REQUIRE_FALSE(zero);
  CHECK(zero.error().message ==
        "launcher.yaml:1: fence.fanout: expected a whole number from 1 to 65536, got '0'");
}

TEST_CASE("launcher config: errors name the line and the key") {
  auto error = [](const char* text) {
    auto c = parse_launcher_config(text, "launcher.yaml");
    REQUIRE_FALSE(c);
    return c.error().message;
  };
  CHECK(error("fabric:\n  url: ftp://x\n") ==
        "launcher.yaml:2: fabric.url: expected an http:// or https:// URL, got 'ftp://x'");
  CHECK(error("fabric:\n  vni: 70000\n")
            .find("fabric.vni: expected a whole number from 1 to 65535") != std::string::npos);
  CHECK(error("fabric:\n  attempts: 0\n").find("fabric.attempts") != std::string::npos);
  CHECK(error("fabrik:\n  url: http://x\n") ==
        "launcher.yaml:1: unknown key 'fabrik' (did you mean 'fabric'?)");
  CHECK(error("fabric: [1\n").find("YAML syntax error") != std::string::npos);
}

TEST_CASE("the shipped conf/launcher.yaml parses") {
  auto c = load_launcher_config(LATTICE_SOURCE_DIR "/conf/launcher.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  CHECK(c->fabric_url == "https://fabric-manager.example:8443");
  CHECK(c->fabric_token_file == "/etc/lattice/fabric.token");
  CHECK(c->vni == 0);
  CHECK(c->fabric_attempts == 4);
}

TEST_CASE("launcher config: a file over 1 MiB is refused unparsed") {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/launcher-big-XXXXXX";
  int fd = ::mkstemp(path.data());
  REQUIRE(fd >= 0);
  std::string comment = "# " + std::string(1 << 20, 'x') + "\n";
  REQUIRE(::write(fd, comment.data(), comment.size()) == static_cast<ssize_t>(comment.size()));
  ::close(fd);
  auto c = load_launcher_config(path);
  ::unlink(path.c_str());
  REQUIRE_FALSE(c);
  CHECK(c.error().message.find("is larger than 1048576 bytes") != std::string::npos);
}
