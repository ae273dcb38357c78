// lattice-agentd: the node agent. Reads its YAML config, lets flags override it, and runs one
// libuv loop until SIGTERM/SIGINT has ended every launch.
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "agent/agent.hpp"
#include "base/log.hpp"
#include "base/paths.hpp"
#include "config/config.hpp"
#include "lattice_version.h"
#include "net/loop.hpp"
#include "net/signal.hpp"

extern char** environ;

namespace {

using namespace lattice;

constexpr const char* kDefaultConfig = "/etc/lattice/agent.yaml";

const char* kUsage =
    "usage: lattice-agentd [--config PATH] [--listen HOST:PORT] [--node-id NAME]\n"
    "                      [--admin-socket PATH] [--pmi-socket-dir DIR] [--log-level LEVEL]\n"
    "                      [--ready-fd FD] [--check-config] [--version] [--help]\n"
    "Flags override the config file (default " "/etc/lattice/agent.yaml" " when it exists).\n";

struct Flags {
  std::string config_path;
  std::vector<std::pair<std::string, std::string>> overrides;  // flag -> value, in order
  int ready_fd = -1;
  bool check_config = false;
};

int usage_error(const std::string& message) {
  std::fprintf(stderr, "lattice-agentd: %s\n%s", message.c_str(), kUsage);
  return 2;
}

// Applies one overriding flag to the config; returns an error text or "".
std::string apply(config::AgentConfig& cfg, const std::string& flag, const std::string& value) {
  if (flag == "--listen") {
    auto hp = parse_host_port(value);
    if (!hp) return cat("--listen: expected HOST:PORT, got '", value, "'");
    cfg.listen_host = hp->host;
    cfg.listen_port = hp->port;
  } else if (flag == "--node-id") {
    if (value.empty() || value.find(',') != std::string::npos)
      return "--node-id: a non-empty name without ','";
    cfg.node_id = value;
  } else if (flag == "--admin-socket") {
    cfg.admin_socket = value;
  } else if (flag == "--pmi-socket-dir") {
    cfg.pmi_socket_dir = value;
  } else if (flag == "--log-level") {
    auto level = parse_log_level(value);
    if (!level) return cat("--log-level: one of error, warn, info, debug, trace; got '", value, "'");
    cfg.log_level = *level;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--version") {
      std::printf("lattice-agentd %s\n", LATTICE_VERSION);
      return 0;
    } else if (arg == "--check-config") {
      flags.check_config = true;
    } else if (arg == "--config" || arg == "--listen" || arg == "--node-id" ||
               arg == "--admin-socket" || arg == "--pmi-socket-dir" || arg == "--log-level" ||
               arg == "--ready-fd") {
      const char* v = value();
      if (!v) return usage_error(arg + " needs a value");
      if (arg == "--config") {
        flags.config_path = v;
      } else if (arg == "--ready-fd") {
        auto fd = parse_int(v);
        if (!fd || *fd < 0) return usage_error("--ready-fd: expected a file descriptor number");
        flags.ready_fd = static_cast<int>(*fd);
      } else {
        flags.overrides.emplace_back(arg, v);
      }
    } else {
      return usage_error(cat("unknown argument '", arg, "'"));
    }
  }

  std::string path = flags.config_path;
  if (path.empty() && ::access(kDefaultConfig, R_OK) == 0) path = kDefaultConfig;
  auto loaded = path.empty() ? config::parse_config("", "(defaults)")
                             : config::load_config_file(path);
  if (!loaded) {
    std::fprintf(stderr, "lattice-agentd: %s\n", loaded.error().message.c_str());
    return 2;
  }
  config::AgentConfig cfg = std::move(loaded.value());
  for (auto& [flag, v] : flags.overrides) {
    std::string err = apply(cfg, flag, v);
    if (!err.empty()) return usage_error(err);
  }
  if (flags.check_config) {
    std::printf("%s", config::describe(cfg).c_str());
    return 0;
  }

  set_log_level(cfg.log_level);
  set_log_tag(cat("agentd[", cfg.node_id, "]"));
  net::ignore_sigpipe();

  agent::LaunchEnvironment env;
  env.node_id = cfg.node_id;
  env.pmi_socket_dir = cfg.pmi_socket_dir;
  env.rank_exec = find_sibling("lattice-rank-exec", LATTICE_LIBEXECDIR);
  for (char** e = environ; *e; ++e) env.base_env.emplace_back(*e);
  char cwd[PATH_MAX];
  env.agent_cwd = ::getcwd(cwd, sizeof cwd) ? cwd : "/";

  net::Loop loop;
  agent::Agent agent(loop, cfg, std::move(env));
  auto started = agent.start(flags.ready_fd);
  if (!started) {
    LAT_LOG(error, "agent", started.error().message);
    return 1;
  }
  loop.run();
  return 0;
}
