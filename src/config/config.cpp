// YAML → AgentConfig. A table maps every dotted key path to the function that reads it; the walk
// in yaml_reader catches unknown keys, duplicates and misplaced sections.
#include "config/config.hpp"

#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "base/strings.hpp"
#include "config/yaml_reader.hpp"
#include "proc/cpu_binding.hpp"

namespace lattice::config {
namespace {

// More misses than this at a 1 s interval would keep a dead peer's launch alive for ~17 minutes.
constexpr int64_t kMaxHeartbeatMisses = 1000;
// Limits an operator may raise, bounded so that a typo cannot make them meaningless.
constexpr int64_t kMaxRanksPerNode = 1 << 16;
constexpr int64_t kMaxWorldSize = 1 << 24;
constexpr int64_t kMaxConnections = 1 << 20;
// A Unix socket path must fit sockaddr_un::sun_path with its terminating NUL.
constexpr size_t kMaxSocketPath = sizeof(sockaddr_un{}.sun_path) - 1;

Result<std::string> socket_path(const Reader& r, const YAML::Node& node, const std::string& path) {
  auto s = text(r, node, path);
  if (s && s->size() > kMaxSocketPath)
    return r.bad(node, path, cat("a Unix socket path is limited to ", kMaxSocketPath, " bytes"));
  return s;
}

// Names and fnmatch(3) patterns of environment variables: name characters and * ? [ ] ! -.
Result<std::vector<std::string>> env_patterns(const Reader& r, const YAML::Node& node,
                                              const std::string& path) {
  if (node.IsNull()) return std::vector<std::string>{};
  if (!node.IsSequence())
    return r.bad(node, path, cat("expected a list of variable names, got ", scalar_or_kind(node)));
  std::vector<std::string> out;
  for (const auto& item : node) {
    auto s = text(r, item, path);
    if (!s) return s.error();
    for (char c : *s)
      if (!std::isalnum(static_cast<unsigned char>(c)) &&
          std::string_view("_*?[]!-").find(c) == std::string_view::npos)
        return r.bad(item, path,
                     cat("'", *s, "' is neither a variable name nor a pattern (* ? [...])"));
    out.push_back(std::move(*s));
  }
  return out;
}

// gpus: [{index: 0, vendor: nvidia, numa: 0}, ...]: the node's GPUs where hwloc sees none
// (index: the vendor runtime's number; numa: the NUMA node's OS number, optional).
Result<std::vector<proc::Gpu>> gpu_list(const Reader& r, const YAML::Node& node,
                                        const std::string& path) {
  if (node.IsNull()) return std::vector<proc::Gpu>{};
  if (!node.IsSequence())
    return r.bad(node, path,
                 cat("expected a list like [{index: 0, vendor: nvidia, numa: 0}], got ",
                     scalar_or_kind(node)));
  if (node.size() > static_cast<size_t>(proc::kMaxGpus))
    return r.bad(node, path, cat(node.size(), " GPUs (at most ", proc::kMaxGpus, ")"));
  std::vector<proc::Gpu> out;
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string at = cat(path, '[', i, ']');
    if (!item.IsMap())
      return r.bad(item, at,
                   cat("expected {index: N, vendor: nvidia|amd|intel[, numa: N]}, got ",
                       scalar_or_kind(item)));
    proc::Gpu gpu;
    bool has_index = false, has_vendor = false;
    std::set<std::string> seen;
    for (const auto& kv : item) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      const std::string key_path = cat(at, '.', key);
      if (!seen.insert(key).second) return r.bad(kv.first, key_path, "given twice");
      if (key == "index") {
        auto n = count(r, kv.second, key_path, 0, proc::kMaxGpus - 1);
        if (!n) return n.error();
        gpu.index = static_cast<int>(*n);
        has_index = true;
      } else if (key == "numa") {
        auto n = count(r, kv.second, key_path, 0, proc::kMaxCpus - 1);
        if (!n) return n.error();
        gpu.numa = static_cast<int>(*n);
      } else if (key == "vendor") {
        auto name = text(r, kv.second, key_path);
        if (!name) return name.error();
        auto vendor = proc::parse_gpu_vendor(*name);
        if (!vendor) return r.bad(kv.second, key_path, vendor.error().message);
        gpu.vendor = *vendor;
        has_vendor = true;
      } else {
        return r.bad(kv.first, at, cat("unknown key '", key, "' (a GPU has index, vendor, numa)"));
      }
    }
    if (!has_index || !has_vendor)
      return r.bad(item, at, cat("a GPU needs ", has_index ? "its vendor" : "its index"));
    for (const proc::Gpu& other : out)
      if (other.vendor == gpu.vendor && other.index == gpu.index)
        return r.bad(
            item, at,
            cat(proc::gpu_vendor_name(gpu.vendor), " GPU ", gpu.index, " is listed twice"));
    out.push_back(gpu);
  }
  return out;
}

// HOST:PORT, a numeric address ([IPv6]:PORT).
Status address(const Reader& r, const YAML::Node& n, const std::string& p, std::string& host,
               int& port) {
  auto s = text(r, n, p);
  if (!s) return s.error();
  auto hp = parse_host_port(*s);
  if (!hp)
    return r.bad(n, p, cat("expected HOST:PORT with a port from 0 to 65535, got '", *s, "'"));
  host = hp->host;
  port = hp->port;
  return {};
}

using Key = config::Key<AgentConfig>;

// Every key the file may hold. A path's prefix before '.' is a section (a nested mapping).
const Key kKeys[] = {
    {"node_id",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) -> Status {
       auto id = text(r, n, p);
       if (id) {
         std::string problem = node_id_problem(*id);
         if (!problem.empty()) return r.bad(n, p, problem);
       }
       return store(std::move(id), c.node_id);
     }},
    {"listen", [](const Reader& r, const YAML::Node& n, const std::string& p,
                  AgentConfig& c) { return address(r, n, p, c.listen_host, c.listen_port); }},
    {"log_level",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) -> Status {
       auto s = text(r, n, p);
       if (!s) return s.error();
       auto level = parse_log_level(*s);
       if (!level)
         return r.bad(n, p, cat("expected error, warn, info, debug or trace, got '", *s, "'"));
       c.log_level = *level;
       return {};
     }},
    {"log_file", [](const Reader& r, const YAML::Node& n, const std::string& p,
                    AgentConfig& c) { return store(text(r, n, p), c.log_file); }},
    {"admin_socket", [](const Reader& r, const YAML::Node& n, const std::string& p,
                        AgentConfig& c) { return store(socket_path(r, n, p), c.admin_socket); }},
    {"metrics.listen",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return address(r, n, p, c.metrics_host, c.metrics_port);
     }},
    {"pmi.socket_dir", [](const Reader& r, const YAML::Node& n, const std::string& p,
                          AgentConfig& c) { return store(text(r, n, p), c.pmi_socket_dir); }},
    {"fence.timeout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(milliseconds(r, n, p), c.fence_timeout_ms);
     }},
    // Agents configured differently built different trees and refused each other's chunks.
    {"fence.fanout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig&) -> Status {
       return r.bad(n, p,
                    "the fence tree is the launch's: set fence.fanout in the launcher's "
                    "configuration (lattice-launcher.yaml(5)) or pass --fanout, not here");
     }},
    {"links.heartbeat_interval",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(milliseconds(r, n, p), c.heartbeat_interval_ms);
     }},
    {"links.heartbeat_misses",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(count(r, n, p, 1, kMaxHeartbeatMisses), c.heartbeat_misses);
     }},
    {"compat.set_slurm_env",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(boolean(r, n, p), c.compat_set_slurm_env);
     }},
    {"security.key_file", [](const Reader& r, const YAML::Node& n, const std::string& p,
                             AgentConfig& c) { return store(text(r, n, p), c.key_file); }},
    {"security.identity_file",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(text(r, n, p), c.identity_file);
     }},
    {"security.certificate_authority",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(text(r, n, p), c.certificate_authority);
     }},
    {"security.revoked", [](const Reader& r, const YAML::Node& n, const std::string& p,
                            AgentConfig& c) { return store(text(r, n, p), c.revoked); }},
    {"security.handshake", [](const Reader& r, const YAML::Node& n, const std::string& p,
                              AgentConfig& c) { return store(count(r, n, p, 2, 3), c.handshake); }},
    {"security.allow_root_jobs",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(boolean(r, n, p), c.allow_root_jobs);
     }},
    {"security.allow_root_job_env",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(env_patterns(r, n, p), c.allow_root_job_env);
     }},
    {"security.handshake_timeout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(milliseconds(r, n, p), c.handshake_timeout_ms);
     }},
    {"limits.max_ranks_per_node",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(count(r, n, p, 1, kMaxRanksPerNode), c.max_ranks_per_node);
     }},
    {"limits.max_world_size",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(count(r, n, p, 1, kMaxWorldSize), c.max_world_size);
     }},
    {"limits.max_connections",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(count(r, n, p, 1, kMaxConnections), c.max_connections);
     }},
    {"limits.max_handshakes_per_source",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(count(r, n, p, 1, kMaxConnections), c.max_handshakes_per_source);
     }},
    {"limits.idle_timeout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(milliseconds(r, n, p), c.idle_timeout_ms);
     }},
    {"jobs.containment",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) -> Status {
       auto s = text(r, n, p);
       if (!s) return s.error();
       auto mode = proc::parse_containment_mode(*s);
       if (!mode)
         return r.bad(n, p, cat("expected auto, cgroup2, cgroup1 or subreaper, got '", *s, "'"));
       c.containment = *mode;
       return {};
     }},
    {"gpus", [](const Reader& r, const YAML::Node& n, const std::string& p,
                AgentConfig& c) { return store(gpu_list(r, n, p), c.gpus); }},
    {"jobs.propagate_limits",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) -> Status {
       auto s = text(r, n, p);
       if (!s) return s.error();
       auto resources = proc::parse_propagated(*s);
       if (!resources) return r.bad(n, p, resources.error().message);
       c.propagate_limits = std::move(resources.value());
       return {};
     }},
};

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  return buf;
}

// Strings that YAML would read as something else (null, a list, a comment...) are single-quoted.
std::string yaml_string(const std::string& s) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto plain = [&](char c) {
    return word(c) || std::string_view("./-@+:").find(c) != std::string_view::npos;
  };
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  bool safe = !s.empty() && (word(s[0]) || s[0] == '/' || s[0] == '.') &&
              std::all_of(s.begin(), s.end(), plain) && lower != "null";
  if (safe) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> quoted(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(yaml_string(item));
  return out;
}

std::vector<std::string> gpu_items(const std::vector<proc::Gpu>& gpus) {
  std::vector<std::string> out;
  for (const proc::Gpu& gpu : gpus)
    out.push_back(cat("{index: ", gpu.index, ", vendor: ", proc::gpu_vendor_name(gpu.vendor),
                      gpu.numa >= 0 ? cat(", numa: ", gpu.numa) : std::string(), "}"));
  return out;
}

// Milliseconds back to the file's seconds, exactly: 60000 -> "60", 2500 -> "2.5".
std::string seconds(uint32_t ms) {
  std::string out = std::to_string(ms / 1000);
  if (uint32_t frac = ms % 1000) {
    std::string digits = std::to_string(1000 + frac).substr(1);  // zero-padded to 3
    out += '.' + digits.substr(0, digits.find_last_not_of('0') + 1);
  }
  return out;
}

}  // namespace

std::string node_id_problem(std::string_view id) {
  // Node ids are joined with ',' into LATTICE_NODELIST / SLURM_NODELIST, and travel in the
  // handshake, whose names are printable ASCII without spaces.
  if (id.empty() || id.size() > 255) return "must be 1 to 255 bytes long";
  for (unsigned char c : id) {
    if (c == ',') return "must not contain ','";
    if (c < 0x21 || c > 0x7e) return "must be printable ASCII without spaces";
  }
  return "";
}

Result<AgentConfig> parse_config(std::string_view yaml_text, const std::string& source_name) {
  AgentConfig cfg;
  cfg.node_id = host_name();
  if (auto ok = read_document(yaml_text, source_name, kKeys, cfg); !ok) return ok.error();
  return cfg;
}

Reload reload(const AgentConfig& running, const AgentConfig& fresh) {
  Reload out{fresh, {}};
  AgentConfig& next = out.config;
  auto keep = [&](auto field, const char* key) {
    if (!(running.*field == fresh.*field)) out.restart_only.push_back(key);
    next.*field = running.*field;
  };
  keep(&AgentConfig::node_id, "node_id");
  keep(&AgentConfig::listen_host, "listen");
  keep(&AgentConfig::listen_port, "listen");
  keep(&AgentConfig::admin_socket, "admin_socket");
  keep(&AgentConfig::metrics_host, "metrics.listen");
  keep(&AgentConfig::metrics_port, "metrics.listen");
  keep(&AgentConfig::pmi_socket_dir, "pmi.socket_dir");
  keep(&AgentConfig::heartbeat_interval_ms, "links.heartbeat_interval");
  keep(&AgentConfig::heartbeat_misses, "links.heartbeat_misses");
  keep(&AgentConfig::key_file, "security.key_file");
  keep(&AgentConfig::identity_file, "security.identity_file");
  keep(&AgentConfig::certificate_authority, "security.certificate_authority");
  keep(&AgentConfig::handshake, "security.handshake");
  keep(&AgentConfig::allow_root_jobs, "security.allow_root_jobs");
  keep(&AgentConfig::handshake_timeout_ms, "security.handshake_timeout");
  keep(&AgentConfig::containment, "jobs.containment");
  keep(&AgentConfig::gpus, "gpus");
  out.restart_only.erase(std::unique(out.restart_only.begin(), out.restart_only.end()),
                         out.restart_only.end());
  return out;
}

Result<AgentConfig> load_config_file(const std::string& path) {
  auto text = read_config_text(path);
  if (!text) return text.error();
  return parse_config(*text, path);
}

std::string describe(const AgentConfig& c) {
  // An IPv6 address in brackets, as parse_host_port reads it back.
  auto host_port = [](const std::string& host, int port) {
    return host.find(':') != std::string::npos ? cat('[', host, "]:", port) : cat(host, ':', port);
  };
  std::string listen = c.listen_host.empty()
                           ? "# listen: not set (the agent refuses to start without one)"
                           : "listen: " + yaml_string(host_port(c.listen_host, c.listen_port));
  return cat(
      "node_id: ", yaml_string(c.node_id),                                 //
      "\n", listen,                                                        //
      "\nlog_level: ", log_level_name(c.log_level),                        //
      c.log_file.empty() ? "" : "\nlog_file: " + yaml_string(c.log_file),  //
      "\nadmin_socket: ", yaml_string(c.admin_socket),                     //
      c.metrics_host.empty()
          ? ""
          : "\nmetrics:\n  listen: " + yaml_string(host_port(c.metrics_host, c.metrics_port)),
      "\npmi:\n  socket_dir: ", yaml_string(c.pmi_socket_dir),                    //
      "\nfence:\n  timeout: ", seconds(c.fence_timeout_ms),                       //
      "\nlinks:\n  heartbeat_interval: ", seconds(c.heartbeat_interval_ms),       //
      "\n  heartbeat_misses: ", c.heartbeat_misses,                               //
      "\ncompat:\n  set_slurm_env: ", c.compat_set_slurm_env ? "true" : "false",  //
      "\nsecurity:\n  ",
      c.key_file.empty() ? "# key_file: not set (the agent refuses to start without one)"
                         : "key_file: " + yaml_string(c.key_file),
      c.identity_file.empty() ? "\n  # identity_file: not set"
                              : "\n  identity_file: " + yaml_string(c.identity_file),
      c.certificate_authority.empty()
          ? "\n  # certificate_authority: not set (peers named on the cluster key alone)"
          : "\n  certificate_authority: " + yaml_string(c.certificate_authority),
      c.revoked.empty() ? "\n  # revoked: not set" : "\n  revoked: " + yaml_string(c.revoked),
      "\n  handshake: ", c.handshake,                                              //
      "\n  allow_root_jobs: ", c.allow_root_jobs ? "true" : "false",               //
      "\n  allow_root_job_env: [", join(quoted(c.allow_root_job_env), ", "), ']',  //
      "\n  handshake_timeout: ", seconds(c.handshake_timeout_ms),                  //
      "\nlimits:\n  max_ranks_per_node: ", c.max_ranks_per_node,                   //
      "\n  max_world_size: ", c.max_world_size,                                    //
      "\n  max_connections: ", c.max_connections,                                  //
      "\n  max_handshakes_per_source: ", c.max_handshakes_per_source,              //
      "\n  idle_timeout: ", seconds(c.idle_timeout_ms),                            //
      "\njobs:\n  containment: ", proc::containment_mode_name(c.containment),      //
      "\n  propagate_limits: ", proc::describe_propagated(c.propagate_limits),     //
      "\ngpus: [", join(gpu_items(c.gpus), ", "), "]\n");
}

}  // namespace lattice::config
