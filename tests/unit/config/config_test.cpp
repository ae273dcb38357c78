#include <doctest/doctest.h>

#include "config/config.hpp"

using namespace lattice;
using namespace lattice::config;

namespace {
std::string error_of(const std::string& yaml) {
  auto c = parse_config(yaml, "agent.yaml");
  REQUIRE_FALSE(c);
  return c.error().message;
}
bool contains(const std::string& s, const std::string& needle) {
  return s.find(needle) != std::string::npos;
}
}  // namespace

TEST_CASE("an empty file gives every default") {
  auto c = parse_config("", "agent.yaml");
  REQUIRE(c);
  AgentConfig d;
  CHECK_FALSE(c->node_id.empty());  // the host name
  CHECK(c->listen_host == d.listen_host);
  CHECK(c->listen_port == 7400);
  CHECK(c->fence_timeout_ms == 60000);
  CHECK(c->tree_fanout == 8);
  CHECK(c->log_level == LogLevel::info);
  CHECK_FALSE(c->compat_set_slurm_env);
}

TEST_CASE("the shipped conf/agent.yaml parses and states the defaults") {
  auto c = load_config_file(LATTICE_SOURCE_DIR "/conf/agent.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  AgentConfig d;
  CHECK(c->node_id == "n1");  // the example names its node; the default is the host name
  CHECK(c->listen_host == d.listen_host);
  CHECK(c->listen_port == d.listen_port);
  CHECK(c->admin_socket == d.admin_socket);
  CHECK(c->pmi_socket_dir == d.pmi_socket_dir);
  CHECK(c->fence_timeout_ms == d.fence_timeout_ms);
  CHECK(c->tree_fanout == d.tree_fanout);
  CHECK(c->heartbeat_interval_ms == d.heartbeat_interval_ms);
  CHECK(c->heartbeat_misses == d.heartbeat_misses);
  CHECK(c->log_level == d.log_level);
  CHECK(c->compat_set_slurm_env == d.compat_set_slurm_env);
}

TEST_CASE("every key is read") {
  auto c = parse_config(R"(
node_id: gpu17
listen: 127.0.0.2:0
log_level: debug
admin_socket: /tmp/a.sock
pmi: {socket_dir: /tmp/pmi}
fence: {timeout: 2.5, fanout: 3}
links: {heartbeat_interval: 0.5, heartbeat_misses: 5}
compat: {set_slurm_env: true}
)", "agent.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  CHECK(c->node_id == "gpu17");
  CHECK(c->listen_host == "127.0.0.2");
  CHECK(c->listen_port == 0);
  CHECK(c->log_level == LogLevel::debug);
  CHECK(c->admin_socket == "/tmp/a.sock");
  CHECK(c->pmi_socket_dir == "/tmp/pmi");
  CHECK(c->fence_timeout_ms == 2500);
  CHECK(c->tree_fanout == 3);
  CHECK(c->heartbeat_interval_ms == 500);
  CHECK(c->heartbeat_misses == 5);
  CHECK(c->compat_set_slurm_env);
}

TEST_CASE("errors name the file, the line and the key") {
  auto e = error_of("node_id: a\nfense:\n  timeout: 3\n");
  CHECK(contains(e, "agent.yaml:2"));
  CHECK(contains(e, "unknown key 'fense'"));
  CHECK(contains(error_of("fence:\n  timeout: abc\n"), "fence.timeout"));
  CHECK(contains(error_of("fence:\n  timeout: -1\n"), "fence.timeout"));
  CHECK(contains(error_of("fence:\n  fanout: 0\n"), "fence.fanout"));
  CHECK(contains(error_of("listen: 0.0.0.0:70000\n"), "listen"));
  CHECK(contains(error_of("log_level: loud\n"), "log_level"));
  CHECK(contains(error_of("compat:\n  set_slurm_env: maybe\n"), "compat.set_slurm_env"));
  CHECK(contains(error_of("node_id: a,b\n"), "node_id"));
  CHECK(contains(error_of("pmi: [1, 2]\n"), "pmi"));
  CHECK(contains(error_of("fence: {timeout: [1\n"), "YAML syntax error"));
}

TEST_CASE("a missing file is a clear error") {
  auto c = load_config_file("/nonexistent/agent.yaml");
  REQUIRE_FALSE(c);
  CHECK(contains(c.error().message, "/nonexistent/agent.yaml"));
}

TEST_CASE("describe prints what --check-config shows, and it parses back") {
  auto c = parse_config("node_id: x\nfence: {timeout: 7}\n", "agent.yaml");
  REQUIRE(c);
  auto again = parse_config(describe(*c), "described");
  REQUIRE_MESSAGE(again, again.error().message);
  CHECK(again->node_id == "x");
  CHECK(again->fence_timeout_ms == 7000);
}
