// Agent configuration: every key, the defaults, each kind of error with its file/line/key, the
// round trip through describe(), and the shipped conf/agent.yaml (LATTICE_SOURCE_DIR comes from
// tests/unit/config/meson.build).
#include "config/config.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

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

void check_defaults_except_node_id(const AgentConfig& c) {
  AgentConfig d;
  CHECK(c.listen_host.empty());  // no default: the agent refuses to start without one
  CHECK(c.listen_port == 7400);
  CHECK(c.gpus.empty());
  CHECK(c.pmi_socket_dir == "/run/lattice");
  CHECK(c.fence_timeout_ms == 60000);
  CHECK(c.heartbeat_interval_ms == 1000);
  CHECK(c.heartbeat_misses == 3);
  CHECK(c.log_level == LogLevel::info);
  CHECK(c.admin_socket == "/run/lattice/agentd.sock");
  CHECK(c.compat_set_slurm_env == false);
  CHECK(c.allow_root_jobs == false);
  CHECK(c.handshake_timeout_ms == 5000);
  CHECK(c.max_ranks_per_node == 1024);
  CHECK(c.max_world_size == 1048576);
  CHECK(c.max_connections == 1024);
  CHECK(c.max_handshakes_per_source == 64);
  CHECK(c.idle_timeout_ms == 60000);
  // The struct's own initialisers are the same documented defaults.
  CHECK(d.listen_port == c.listen_port);
  CHECK(d.fence_timeout_ms == c.fence_timeout_ms);
}

}  // namespace

TEST_CASE("an empty file, or only comments, gives every default") {
  for (const char* text : {"", "# nothing here\n", "---\n"}) {
    CAPTURE(text);
    auto c = parse_config(text, "agent.yaml");
    REQUIRE_MESSAGE(c, c.error().message);
    CHECK_FALSE(c->node_id.empty());  // the host name
    check_defaults_except_node_id(*c);
  }
}

TEST_CASE("a section whose keys are all commented out is empty, not an error") {
  auto c = parse_config("fence:\n  # timeout: 5\nlinks:\n", "agent.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  CHECK(c->fence_timeout_ms == 60000);
}

TEST_CASE("the shipped conf/agent.yaml parses and states the documented defaults") {
  auto c = load_config_file(LATTICE_SOURCE_DIR "/conf/agent.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  // node_id stays commented out so the file can be copied to every node: the host name.
  CHECK(c->node_id == parse_config("", "empty")->node_id);
  // listen stays commented out: the operator sets this node's management address.
  check_defaults_except_node_id(*c);
  // The one key without a default that it sets: where the operator puts the cluster key.
  CHECK(c->key_file == "/etc/lattice/cluster.key");
}

TEST_CASE("every key is read") {
  auto c = parse_config(R"(
node_id: gpu17
listen: 127.0.0.2:0
log_level: debug
admin_socket: /tmp/a.sock
pmi: {socket_dir: /tmp/pmi}
fence: {timeout: 2.5}
links: {heartbeat_interval: 0.25, heartbeat_misses: 5}
compat: {set_slurm_env: true}
security: {key_file: /etc/k, allow_root_jobs: yes, handshake_timeout: 2}
limits: {max_ranks_per_node: 64, max_world_size: 4096, max_connections: 99, idle_timeout: 30,
         max_handshakes_per_source: 5}
)",
                        "agent.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  CHECK(c->key_file == "/etc/k");
  CHECK(c->allow_root_jobs);
  CHECK(c->handshake_timeout_ms == 2000);
  CHECK(c->max_ranks_per_node == 64);
  CHECK(c->max_world_size == 4096);
  CHECK(c->max_connections == 99);
  CHECK(c->max_handshakes_per_source == 5);
  CHECK(c->idle_timeout_ms == 30000);
  CHECK(c->node_id == "gpu17");
  CHECK(c->listen_host == "127.0.0.2");
  CHECK(c->listen_port == 0);
  CHECK(c->log_level == LogLevel::debug);
  CHECK(c->admin_socket == "/tmp/a.sock");
  CHECK(c->pmi_socket_dir == "/tmp/pmi");
  CHECK(c->fence_timeout_ms == 2500);
  CHECK(c->heartbeat_interval_ms == 250);
  CHECK(c->heartbeat_misses == 5);
  CHECK(c->compat_set_slurm_env);
}

TEST_CASE("node ids are what a handshake can carry") {
  CHECK(node_id_problem("gpu-17.cluster") == "");
  CHECK(node_id_problem("a b") == "must be printable ASCII without spaces");
  CHECK(node_id_problem("a,b") == "must not contain ','");
  CHECK(node_id_problem(std::string(256, 'x')) == "must be 1 to 255 bytes long");
  CHECK(contains(error_of("node_id: 'a b'\n"), "node_id: must be printable ASCII"));
}

TEST_CASE("listen takes IPv6 in brackets; yes/no are booleans") {
  auto c = parse_config("listen: '[::1]:7401'\ncompat: {set_slurm_env: yes}\n", "agent.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  CHECK(c->listen_host == "::1");
  CHECK(c->listen_port == 7401);
  CHECK(c->compat_set_slurm_env);
}

TEST_CASE("unknown keys are errors with their line, and a hint for typos") {
  CHECK(error_of("node_id: a\nlisten: 0.0.0.0:1\n\nfense:\n  timeout: 3\n") ==
        "agent.yaml:4: unknown key 'fense' (did you mean 'fence'?)");
  CHECK(error_of("fence:\n  timout: 3\n") ==
        "agent.yaml:2: unknown key 'fence.timout' (did you mean 'fence.timeout'?)");
  CHECK(error_of("colour: blue\n") == "agent.yaml:1: unknown key 'colour'");
  CHECK(error_of("timeout: 3\n") == "agent.yaml:1: unknown key 'timeout'");  // belongs in fence:
  CHECK(contains(error_of("pmi:\n  socket_dir: /a\n  socket_dir: /b\n"),
                 "agent.yaml:3: duplicate key 'pmi.socket_dir'"));
}

TEST_CASE("bad values name the key path and what was wrong") {
  CHECK(error_of("fence:\n  timeout: abc\n") ==
        "agent.yaml:2: fence.timeout: expected a number of seconds (at least 0.001, at most "
        "604800), got 'abc'");
  CHECK(contains(error_of("fence: {timeout: 0}\n"), "fence.timeout: expected a number of seconds"));
  CHECK(contains(error_of("fence: {timeout: -1}\n"), "fence.timeout"));
  CHECK(contains(error_of("fence: {timeout: 0.0001}\n"), "fence.timeout"));  // rounds to 0 ms
  CHECK(contains(error_of("fence: {timeout: 1e9}\n"), "fence.timeout"));
  CHECK(contains(error_of("fence: {timeout: nan}\n"), "fence.timeout"));
  // The tree is the launch's (agents configured differently built different trees): the key
  // moved to the launcher's file, and an agent's file that still has it says where.
  CHECK(error_of("fence: {fanout: 3}\n") ==
        "agent.yaml:1: fence.fanout: the fence tree is the launch's: set fence.fanout in the "
        "launcher's configuration (lattice-launcher.yaml(5)) or pass --fanout, not here");
  CHECK(contains(error_of("links: {heartbeat_interval: soon}\n"), "links.heartbeat_interval"));
  CHECK(contains(error_of("links: {heartbeat_misses: 0}\n"), "links.heartbeat_misses"));
  CHECK(contains(error_of("listen: 0.0.0.0:70000\n"), "agent.yaml:1: listen: expected HOST:PORT"));
  CHECK(contains(error_of("listen: 7400\n"), "listen: expected HOST:PORT"));
  CHECK(contains(error_of("log_level: loud\n"),
                 "log_level: expected error, warn, info, debug or trace, got 'loud'"));
  CHECK(contains(error_of("compat:\n  set_slurm_env: maybe\n"),
                 "agent.yaml:2: compat.set_slurm_env: expected true or false, got 'maybe'"));
  CHECK(contains(error_of("node_id: a,b\n"), "node_id: must not contain ','"));
  CHECK(contains(error_of("node_id:\n"), "node_id: expected a non-empty string"));
  CHECK(contains(error_of("admin_socket: /" + std::string(200, 'x') + "\n"),
                 "admin_socket: a Unix socket path is limited to"));
  CHECK(contains(error_of("jobs: {containment: cgroups}\n"),
                 "jobs.containment: expected auto, cgroup2, cgroup1 or subreaper, got 'cgroups'"));
  CHECK(contains(error_of("jobs: {propagate_limits: 'NOFILE, OPENFILES'}\n"),
                 "jobs.propagate_limits: 'OPENFILES' is not a resource limit"));
}

TEST_CASE("wrong shapes are errors") {
  CHECK(contains(error_of("pmi: [1, 2]\n"),
                 "agent.yaml:1: pmi: expected a mapping of keys, got (a list)"));
  CHECK(contains(error_of("fence: 60\n"), "fence: expected a mapping of keys, got 60"));
  CHECK(contains(error_of("node_id: {a: 1}\n"),
                 "node_id: expected a non-empty string, got (a mapping)"));
  CHECK(contains(error_of("just text\n"), "(top level): expected a mapping of keys"));
  CHECK(contains(error_of("- node_id\n"), "(top level): expected a mapping of keys"));
}

TEST_CASE("a YAML syntax error names the line and column") {
  auto e = error_of("node_id: a\nfence: {timeout: [1\n");
  CHECK(contains(e, "agent.yaml:"));
  CHECK(contains(e, "YAML syntax error"));
  CHECK(contains(error_of("a: b: c\n"), "agent.yaml:1:"));
}

TEST_CASE("files: a missing one is a clear error, a real one is read") {
  auto missing = load_config_file("/nonexistent/agent.yaml");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "cannot read config file /nonexistent/agent.yaml");

  char name[] = "/tmp/lattice-config-test-XXXXXX";
  int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  ::close(fd);
  std::string path = name;
  std::ofstream(path) << "fence:\n  timeout: 2\n  timeoutt: 1\n";
  auto bad = load_config_file(path);
  std::remove(path.c_str());
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message ==
        path + ":3: unknown key 'fence.timeoutt' (did you mean 'fence.timeout'?)");
}

TEST_CASE("describe shows the effective config and parses back to the same values") {
  auto c = parse_config(R"(
node_id: "null"
listen: '[::1]:0'
log_level: trace
admin_socket: "/tmp/it's here.sock"
fence: {timeout: 7.125}
links: {heartbeat_interval: 0.5, heartbeat_misses: 9}
compat: {set_slurm_env: true}
security: {key_file: "/etc/lattice/my key", allow_root_jobs: true,
           allow_root_job_env: [BASH_ENV, "PYTHON*", "LUA_[CP]PATH"],
           identity_file: /etc/lattice/identity, certificate_authority: /etc/lattice/ca.pub,
           revoked: /etc/lattice/revoked, handshake: 2}
limits: {max_world_size: 77, max_handshakes_per_source: 3}
jobs: {containment: cgroup1, propagate_limits: "nofile, stack"}
gpus: [{index: 1, vendor: amd, numa: 1}, {vendor: nvidia, index: 0}]
)",
                        "agent.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  std::string text = describe(*c);
  CHECK(contains(text, "  timeout: 7.125\n"));
  CHECK(contains(text, "  heartbeat_interval: 0.5\n"));
  auto again = parse_config(text, "described");
  REQUIRE_MESSAGE(again, (again.error().message + "\n" + text));
  CHECK(again->node_id == "null");
  CHECK(again->listen_host == "::1");
  CHECK(again->listen_port == 0);
  CHECK(again->log_level == LogLevel::trace);
  CHECK(again->admin_socket == "/tmp/it's here.sock");
  CHECK(again->pmi_socket_dir == c->pmi_socket_dir);
  CHECK(again->fence_timeout_ms == 7125);
  CHECK(again->heartbeat_interval_ms == 500);
  CHECK(again->heartbeat_misses == 9);
  CHECK(again->compat_set_slurm_env);
  CHECK(again->key_file == "/etc/lattice/my key");
  CHECK(again->allow_root_jobs);
  CHECK(again->allow_root_job_env ==
        std::vector<std::string>{"BASH_ENV", "PYTHON*", "LUA_[CP]PATH"});
  CHECK(again->max_world_size == 77);
  CHECK(again->identity_file == "/etc/lattice/identity");
  CHECK(again->certificate_authority == "/etc/lattice/ca.pub");
  CHECK(again->revoked == "/etc/lattice/revoked");
  CHECK(again->handshake == 2);
  CHECK(again->max_handshakes_per_source == 3);
  CHECK(again->containment == proc::ContainmentMode::cgroup1);
  CHECK(again->propagate_limits ==
        std::vector<proc::Resource>{proc::Resource::nofile, proc::Resource::stack});
  CHECK(again->gpus ==
        std::vector<proc::Gpu>{{proc::GpuVendor::amd, 1, 1}, {proc::GpuVendor::nvidia, 0, -1}});

  AgentConfig defaults;
  defaults.node_id = "n1";
  CHECK(describe(defaults) ==
        "node_id: n1\n# listen: not set (the agent refuses to start without one)\nlog_level: info\n"
        "admin_socket: /run/lattice/agentd.sock\n"
        "pmi:\n  socket_dir: /run/lattice\nfence:\n  timeout: 60\n"
        "links:\n  heartbeat_interval: 1\n  heartbeat_misses: 3\ncompat:\n  set_slurm_env: false\n"
        "security:\n  # key_file: not set (the agent refuses to start without one)\n"
        "  # identity_file: not set\n"
        "  # certificate_authority: not set (peers named on the cluster key alone)\n"
        "  # revoked: not set\n"
        "  handshake: 3\n"
        "  allow_root_jobs: false\n  allow_root_job_env: []\n  handshake_timeout: 5\n"
        "limits:\n  max_ranks_per_node: 1024\n  max_world_size: 1048576\n  max_connections: 1024\n"
        "  max_handshakes_per_source: 64\n  idle_timeout: 60\njobs:\n  containment: auto\n"
        "  propagate_limits: ALL\ngpus: []\n");
}

TEST_CASE("gpus: the node's GPUs where hwloc sees none, each with its index and vendor") {
  auto c = parse_config(
      "gpus:\n  - {index: 0, vendor: nvidia, numa: 0}\n  - index: 1\n    vendor: intel\n",
      "agent.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  CHECK(c->gpus ==
        std::vector<proc::Gpu>{{proc::GpuVendor::nvidia, 0, 0}, {proc::GpuVendor::intel, 1, -1}});
  CHECK(parse_config("gpus: []\n", "agent.yaml")->gpus.empty());
  CHECK(error_of("gpus: nvidia\n") ==
        "agent.yaml:1: gpus: expected a list like [{index: 0, vendor: nvidia, numa: 0}], got "
        "nvidia");
  CHECK(error_of("gpus: [{index: 0, vendor: ati}]\n") ==
        "agent.yaml:1: gpus[0].vendor: expected nvidia, amd or intel, got 'ati'");
  CHECK(error_of("gpus: [{index: 0}]\n") == "agent.yaml:1: gpus[0]: a GPU needs its vendor");
  CHECK(error_of("gpus: [{vendor: amd}]\n") == "agent.yaml:1: gpus[0]: a GPU needs its index");
  CHECK(contains(error_of("gpus: [{index: 256, vendor: amd}]\n"),
                 "gpus[0].index: expected a whole number from 0 to 255"));
  CHECK(contains(error_of("gpus: [{index: 0, vendor: amd, numa: -1}]\n"), "gpus[0].numa"));
  CHECK(error_of("gpus: [{index: 0, vendor: amd}, {index: 0, vendor: amd}]\n") ==
        "agent.yaml:1: gpus[1]: amd GPU 0 is listed twice");
  CHECK(error_of("gpus: [{index: 0, vendor: amd, numa: 0, numa: 1}]\n") ==
        "agent.yaml:1: gpus[0].numa: given twice");
  CHECK(error_of("gpus: [{index: 0, vendor: amd, bus: 3}]\n") ==
        "agent.yaml:1: gpus[0]: unknown key 'bus' (a GPU has index, vendor, numa)");
  CHECK(contains(error_of("gpus: [3]\n"), "gpus[0]: expected {index: N"));
  // A reload keeps the GPUs the agent started with: its launches count on them.
  AgentConfig running;
  AgentConfig fresh = running;
  fresh.gpus = c->gpus;
  auto reloaded = reload(running, fresh);
  CHECK(reloaded.config.gpus.empty());
  CHECK(reloaded.restart_only == std::vector<std::string>{"gpus"});
}

TEST_CASE("security.allow_root_job_env: a list of variable names and patterns") {
  auto c =
      parse_config("security:\n  allow_root_job_env:\n    - BASH_ENV\n    - PERL5*\n", "a.yaml");
  REQUIRE_MESSAGE(c, c.error().message);
  CHECK(c->allow_root_job_env == std::vector<std::string>{"BASH_ENV", "PERL5*"});
  CHECK(parse_config("security: {allow_root_job_env: []}\n", "a.yaml")->allow_root_job_env.empty());
  CHECK(parse_config("security: {allow_root_job_env: }\n", "a.yaml")->allow_root_job_env.empty());
  CHECK(error_of("security: {allow_root_job_env: BASH_ENV}\n") ==
        "agent.yaml:1: security.allow_root_job_env: expected a list of variable names, got "
        "BASH_ENV");
  CHECK(error_of("security: {allow_root_job_env: [BASH_ENV, 'A B']}\n") ==
        "agent.yaml:1: security.allow_root_job_env: 'A B' is neither a variable name nor a "
        "pattern (* ? [...])");
  CHECK(contains(error_of("security: {allow_root_job_env: [[A]]}\n"), "expected a non-empty"));
}

TEST_CASE("control bytes in a string are refused (found by fuzz_config)") {
  // The fuzzer's input, verbatim: a NUL byte inside admin_socket reached the value as a
  // control character, and describe() then wrote a text that read back differently.
  std::string hex =
      "23206c6174746963652d6167656e65742c0a23202dd38f9296d28c90a62d6c6576656c2953207069636b292e2045"
      "7665"
      "7279206c696e6b2069850a232061757468656e7469636174656420776974682074686520636c7573746573730a23"
      "206f"
      "662074686973206e6f6465206f76657220302e302e302e302e0a6c697374656e3a20ffffffffffffffff302e3a2e"
      "302e"
      "23206c61303a373430300a0a23206572726f72207c207761726e207c20696e666f206e697820736f636b65742066"
      "6f72"
      "20606c6174746963652061646d696e20737461747573602e0a61646d696e5f736f636b65743a202f72756e692f6c"
      "7665"
      "6e20746f206c6174746963652d616765006e746420282d2d6c69677b6574";
  std::string yaml;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    yaml += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  auto error = error_of(yaml);
  CHECK(contains(error, "admin_socket: must not contain control characters"));
  CHECK(contains(error_of("node_id: \"n\\u0000x\"\n"), "node_id: must not contain control"));
  CHECK(contains(error_of("pmi:\n  socket_dir: \"/run/a\\nb\"\n"), "control characters"));
  CHECK(contains(error_of("security:\n  key_file: \"/k\\x7f\"\n"), "byte 127"));
}

TEST_CASE("a reload takes what may change while launches run, and names what may not") {
  auto running = parse_config("log_level: info\nlisten: 10.0.0.1:7400\n", "agent.yaml");
  auto fresh = parse_config(
      "log_level: debug\nlisten: 10.0.0.2:7400\nlimits: {max_connections: 77}\n"
      "security: {allow_root_jobs: true, revoked: /etc/lattice/revoked}\n"
      "jobs: {propagate_limits: NONE, containment: subreaper}\n",
      "agent.yaml");
  REQUIRE(running);
  REQUIRE(fresh);
  auto next = reload(*running, *fresh);
  CHECK(next.config.log_level == LogLevel::debug);
  CHECK(next.config.max_connections == 77);
  CHECK(next.config.propagate_limits.empty());
  CHECK(next.config.revoked == "/etc/lattice/revoked");  // revocations apply without a restart
  CHECK(next.config.listen_host == "10.0.0.1");
  CHECK(!next.config.allow_root_jobs);
  CHECK(next.config.containment == proc::ContainmentMode::automatic);
  CHECK(next.restart_only ==
        std::vector<std::string>{"listen", "security.allow_root_jobs", "jobs.containment"});
  CHECK(reload(*running, *running).restart_only.empty());
}
