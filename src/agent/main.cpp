// lattice-agentd: the node agent. Reads its YAML config, lets flags override it, and runs one
// libuv loop until SIGTERM/SIGINT has ended every launch.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "agent/agent.hpp"
#include "agent/agent_flags.hpp"
#include "agent/node_topology.hpp"
#include "agent/revocations.hpp"
#include "base/heap.hpp"
#include "base/log.hpp"
#include "base/open_files.hpp"
#include "base/paths.hpp"
#include "config/config.hpp"
#include "lattice_version.h"
#include "net/loop.hpp"
#include "net/signal.hpp"
#include "proc/own_user.hpp"
#include "rpc/version.hpp"
#include "secure/certificate_files.hpp"
#include "secure/credentials.hpp"
#include "secure/handshake.hpp"

namespace {

using namespace lattice;

constexpr const char* kDefaultConfig = "/etc/lattice/agent.yaml";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "lattice-agentd: %s (lattice-agentd --help)\n", message.c_str());
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
    std::string problem = config::node_id_problem(value);
    if (!problem.empty()) return cat("--node-id: ", problem);
    cfg.node_id = value;
  } else if (flag == "--admin-socket") {
    cfg.admin_socket = value;
  } else if (flag == "--pmi-socket-dir") {
    cfg.pmi_socket_dir = value;
  } else if (flag == "--key-file") {
    cfg.key_file = value;
  } else if (flag == "--allow-root-jobs") {
    cfg.allow_root_jobs = true;
  } else if (flag == "--log-file") {
    cfg.log_file = value;
  } else if (flag == "--log-level") {
    auto level = parse_log_level(value);
    if (!level)
      return cat("--log-level: one of error, warn, info, debug, trace; got '", value, "'");
    cfg.log_level = *level;
  }
  return "";
}

// --generate-ca and --certify: the operators' certificate authority, on their own host.
int authority_main(const agent::AgentFlags& flags) {
  if (!flags.generate_ca.empty()) {
    if (auto made = secure::generate_authority_files(flags.generate_ca); !made) {
      std::fprintf(stderr, "lattice-agentd: %s\n", made.error().message.c_str());
      return 1;
    }
    std::printf(
        "lattice-agentd: wrote a new certificate authority: its secret key to %s (mode 0600; keep "
        "it off the cluster) and its public key to %s.pub (give that to every agent and "
        "launcher)\n",
        flags.generate_ca.c_str(), flags.generate_ca.c_str());
    return 0;
  }
  const size_t colon = flags.certify.find(':');
  const std::string role = flags.certify.substr(0, colon);
  if (colon == std::string::npos || (role != "agent" && role != "launcher"))
    return usage_error(
        cat("--certify: expected agent:NODE_ID or launcher:NAME, got '", flags.certify, "'"));
  const secure::Identity holder{role == "agent" ? secure::Role::agent : secure::Role::launcher,
                                flags.certify.substr(colon + 1)};
  auto made = secure::certify_identity(flags.ca_file, holder, static_cast<uint64_t>(flags.days),
                                       static_cast<uint64_t>(std::time(nullptr)), flags.out_file);
  if (!made) {
    std::fprintf(stderr, "lattice-agentd: %s\n", made.error().message.c_str());
    return 1;
  }
  std::printf(
      "lattice-agentd: certified %s for %lld days in %s (mode 0600; copy it to that host "
      "only)\nstatic key %s (to revoke it: this line in security.revoked)\n",
      secure::describe(holder).c_str(), static_cast<long long>(flags.days), flags.out_file.c_str(),
      secure::static_key_hex(made->static_key).c_str());
  return 0;
}

// The cluster key and, where identities are certified, this node's identity, which must be the
// certificate of an agent named as this node is: a peer would refuse any other.
Result<secure::Credentials> load_credentials(const config::AgentConfig& cfg) {
  if (!cfg.certificate_authority.empty() && cfg.identity_file.empty())
    return make_error(
        "security.certificate_authority is set but security.identity_file is not: peers that "
        "require certificates would refuse this node (lattice-agentd --certify agent:NODE_ID)");
  if (!cfg.certificate_authority.empty() && cfg.handshake != secure::kHandshakeVersion)
    return make_error(cat("security.handshake: ", cfg.handshake,
                          " carries no certificates; with security.certificate_authority it "
                          "must be ",
                          int{secure::kHandshakeVersion}));
  auto credentials =
      secure::load_credentials(cfg.key_file, cfg.identity_file, cfg.certificate_authority);
  if (!credentials) return credentials;
  credentials->initiate_version = static_cast<uint8_t>(cfg.handshake);
  if (auto revoked = agent::load_revocations(cfg); !revoked)
    return revoked.error();
  else
    credentials->set_revoked(std::move(*revoked));
  if (const secure::OwnIdentity* own = credentials->own()) {
    const secure::Identity expected{secure::Role::agent, cfg.node_id};
    if (own->certificate.holder.role != expected.role ||
        own->certificate.holder.name != cfg.node_id)
      return make_error(cat("identity file ", cfg.identity_file, " certifies ",
                            secure::describe(own->certificate.holder), ", but this is ",
                            secure::describe(expected)));
  }
  return credentials;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = agent::parse_agent_flags({argv + 1, argv + argc});
  if (!parsed) return usage_error(parsed.error().message);
  const agent::AgentFlags& flags = *parsed;
  if (flags.help) {
    std::fputs(agent::kAgentUsage, stdout);
    return 0;
  }
  if (flags.version) {
    std::printf("lattice-agentd %s (%s)\n", LATTICE_VERSION,
                rpc::describe_versions(secure::kHandshakeVersion).c_str());
    return 0;
  }
  if (!flags.generate_key.empty()) {
    auto made = secure::generate_key_file(flags.generate_key);
    if (!made) {
      std::fprintf(stderr, "lattice-agentd: %s\n", made.error().message.c_str());
      return 1;
    }
    std::printf(
        "lattice-agentd: wrote a new cluster key to %s (mode 0600); copy it to every node and "
        "launcher host\n",
        flags.generate_key.c_str());
    return 0;
  }

  if (!flags.generate_ca.empty() || !flags.certify.empty()) return authority_main(flags);

  std::string path = flags.config_path;
  if (path.empty() && ::access(kDefaultConfig, R_OK) == 0) path = kDefaultConfig;
  // The file with the flags over it: at start, and again on SIGHUP (the flags still win).
  auto load = [path, overrides = flags.overrides]() -> Result<config::AgentConfig> {
    auto loaded =
        path.empty() ? config::parse_config("", "(defaults)") : config::load_config_file(path);
    if (!loaded) return loaded.error();
    for (auto& [flag, v] : overrides) {
      std::string err = apply(*loaded, flag, v);
      if (!err.empty()) return make_error(err);
    }
    return loaded;
  };
  auto loaded = load();
  if (!loaded) {
    if (starts_with(loaded.error().message, "--")) return usage_error(loaded.error().message);
    std::fprintf(stderr, "lattice-agentd: %s\n", loaded.error().message.c_str());
    return 2;
  }
  config::AgentConfig cfg = std::move(loaded.value());
  if (flags.check_config) {
    std::printf("%s", config::describe(cfg).c_str());
    return 0;
  }

  if (!cfg.log_file.empty()) {
    if (auto to_file = redirect_stderr_to(cfg.log_file); !to_file) {
      std::fprintf(stderr, "lattice-agentd: %s\n", to_file.error().message.c_str());
      return 1;
    }
  }
  set_log_level(cfg.log_level);
  set_log_tag(cat("agentd[", cfg.node_id, "]"));
  net::ignore_sigpipe();
  keep_freed_memory_for_reuse();
  // What the configured limits let launches hold: a link per connection and, per rank, three
  // pipes, a PMI socket and a pidfd. Past the real limit a launch fails at a rank's start.
  constexpr size_t kFilesPerRank = 5;
  const size_t files_allowed =
      size_t{cfg.max_connections} + size_t{cfg.max_ranks_per_node} * kFilesPerRank + kOwnOpenFiles;
  if (const size_t files = raise_open_files_limit(); files < files_allowed)
    LAT_LOG(warn, "agent", "this process may open ", files,
            " files, fewer than limits.max_connections and limits.max_ranks_per_node allow for (",
            files_allowed,
            "): a launch past it fails with 'too many open files'; raise the hard "
            "limit (LimitNOFILE=, ulimit -Hn) or lower those limits");

  // No address, no agent: every address (0.0.0.0) would open the agent to whatever network the
  // node is on, and which address is this node's management one is the operator's knowledge.
  if (cfg.listen_host.empty()) {
    LAT_LOG(error, "agent",
            "no listen address: set listen: HOST:PORT in the config (this node's address on the "
            "management network, where launchers and the other agents reach it) or pass "
            "--listen HOST:PORT");
    return 1;
  }
  if (cfg.listen_host == "0.0.0.0" || cfg.listen_host == "::")
    LAT_LOG(warn, "agent", "listening on every address of this node (", cfg.listen_host,
            "): prefer its management address");
  // No key, no agent: an agent that accepted unauthenticated links would run anything for
  // anyone who reaches its port.
  if (cfg.key_file.empty()) {
    LAT_LOG(error, "agent",
            "no cluster key: set security.key_file in the config or pass "
            "--key-file FILE (lattice-agentd --generate-key FILE makes one)");
    return 1;
  }
  auto key = load_credentials(cfg);
  if (!key) {
    LAT_LOG(error, "agent", key.error().message);
    return 1;
  }

  MonotonicClock clock;
  agent::LaunchEnvironment env;
  env.clock = &clock;
  env.node_id = cfg.node_id;
  env.rank_exec = find_sibling("lattice-rank-exec", LATTICE_LIBEXECDIR);
  env.mpi_launcher = find_sibling("lattice-mpi-launcher", LATTICE_LIBEXECDIR);
  env.srun_front = find_sibling("lattice-srun", LATTICE_BINDIR);
  env.agent_is_root = ::geteuid() == 0;
  // Read once, before the loop: ranks of the agent's own user then start without the helper.
  auto self = proc::own_user();
  if (!self)
    LAT_LOG(warn, "agent", self.error().message, ": every rank starts through lattice-rank-exec");
  else
    env.self = &self.value();
  // Read once: a launch asking for --cpu-bind is refused with this reason if it failed.
  auto hardware = agent::load_hardware();
  if (!hardware.topology)
    LAT_LOG(warn, "agent", hardware.topology.error().message, ": --cpu-bind is refused");
  env.topology = &hardware.topology;
  const std::vector<proc::Gpu> gpus = agent::node_gpus(hardware, cfg.gpus);
  env.gpus = &gpus;

  net::Loop loop;
  agent::Agent agent(loop, cfg, *key, std::move(env), path.empty() ? "" : path, load);
  auto started = agent.start(flags.ready_fd);
  if (!started) {
    LAT_LOG(error, "agent", started.error().message);
    return 1;
  }
  loop.run();
  return 0;
}
