// YAML → AgentConfig. A table maps every dotted key path to the function that reads it, so
// unknown keys, duplicates and misplaced sections are all caught by one walk over the document.
// yaml-cpp reports problems by throwing; nothing is allowed to leave this file except an Error.
#include "config/config.hpp"

#include <sys/un.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "base/strings.hpp"

namespace lattice::config {
namespace {

// Durations are seconds in the file and milliseconds inside; a week is far beyond any sane fence
// or heartbeat and keeps the conversion well inside uint32_t.
constexpr double kMaxSeconds = 7 * 24 * 3600;
// Wider trees than this would have one agent fan a fence out to thousands of peers at once.
constexpr int64_t kMaxFanout = 1 << 16;
// More misses than this at a 1 s interval would keep a dead peer's launch alive for ~17 minutes.
constexpr int64_t kMaxHeartbeatMisses = 1000;
// Limits an operator may raise, bounded so that a typo cannot make them meaningless.
constexpr int64_t kMaxRanksPerNode = 1 << 16;
constexpr int64_t kMaxWorldSize = 1 << 24;
constexpr int64_t kMaxConnections = 1 << 20;
// A Unix socket path must fit sockaddr_un::sun_path with its terminating NUL.
constexpr size_t kMaxSocketPath = sizeof(sockaddr_un{}.sun_path) - 1;
// Unknown keys this close to a known one (edits) get a "did you mean" hint.
constexpr size_t kTypoDistance = 2;

// Builds "source:LINE: path: what" messages from the node's position in the text.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  Error at(const YAML::Node& node, const std::string& what) const {
    auto mark = node.Mark();
    return make_error(mark.is_null() ? cat(source_, ": ", what)
                                     : cat(source_, ':', mark.line + 1, ": ", what));
  }
  Error bad(const YAML::Node& node, const std::string& path, const std::string& what) const {
    return at(node, cat(path, ": ", what));
  }

 private:
  std::string source_;
};

std::string scalar_or_kind(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  return node.IsMap() ? "(a mapping)" : node.IsSequence() ? "(a list)" : "(nothing)";
}

Result<std::string> text(const Reader& r, const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar() || node.Scalar().empty())
    return r.bad(node, path, cat("expected a non-empty string, got ", scalar_or_kind(node)));
  // Names and paths never hold control bytes; a NUL would silently cut a path short at bind(),
  // and a newline would not survive describe() (found by fuzz_config).
  for (unsigned char c : node.Scalar())
    if (c < 0x20 || c == 0x7f)
      return r.bad(node, path, cat("must not contain control characters (byte ", int{c}, ")"));
  return node.Scalar();
}

Result<std::string> socket_path(const Reader& r, const YAML::Node& node, const std::string& path) {
  auto s = text(r, node, path);
  if (s && s->size() > kMaxSocketPath)
    return r.bad(node, path, cat("a Unix socket path is limited to ", kMaxSocketPath, " bytes"));
  return s;
}

Result<uint32_t> milliseconds(const Reader& r, const YAML::Node& node, const std::string& path) {
  std::string s = node.IsScalar() ? node.Scalar() : "";
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  double ms = std::round(v * 1000);
  if (s.empty() || *end != '\0' || !(ms >= 1) || v > kMaxSeconds)
    return r.bad(node, path,
                 cat("expected a number of seconds (at least 0.001, at most ", kMaxSeconds,
                     "), got '", scalar_or_kind(node), "'"));
  return static_cast<uint32_t>(ms);
}

Result<uint32_t> count(const Reader& r, const YAML::Node& node, const std::string& path, int64_t lo,
                       int64_t hi) {
  auto v = node.IsScalar() ? parse_int(node.Scalar()) : std::nullopt;
  if (!v || *v < lo || *v > hi)
    return r.bad(
        node, path,
        cat("expected a whole number from ", lo, " to ", hi, ", got '", scalar_or_kind(node), "'"));
  return static_cast<uint32_t>(*v);
}

Result<bool> boolean(const Reader& r, const YAML::Node& node, const std::string& path) {
  std::string s = node.IsScalar() ? node.Scalar() : "";
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  return r.bad(node, path, cat("expected true or false, got '", scalar_or_kind(node), "'"));
}

// Stores a successfully read value; passes an error through.
template <class T, class U>
Status store(Result<T> value, U& target) {
  if (!value) return value.error();
  target = std::move(value.value());
  return {};
}

using Setter = Status (*)(const Reader&, const YAML::Node&, const std::string&, AgentConfig&);
struct Key {
  const char* path;
  Setter set;
};

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
    {"listen",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) -> Status {
       auto s = text(r, n, p);
       if (!s) return s.error();
       auto hp = parse_host_port(*s);
       if (!hp)
         return r.bad(n, p, cat("expected HOST:PORT with a port from 0 to 65535, got '", *s, "'"));
       c.listen_host = hp->host;
       c.listen_port = hp->port;
       return {};
     }},
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
    {"admin_socket", [](const Reader& r, const YAML::Node& n, const std::string& p,
                        AgentConfig& c) { return store(socket_path(r, n, p), c.admin_socket); }},
    {"pmi.socket_dir", [](const Reader& r, const YAML::Node& n, const std::string& p,
                          AgentConfig& c) { return store(text(r, n, p), c.pmi_socket_dir); }},
    {"fence.timeout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(milliseconds(r, n, p), c.fence_timeout_ms);
     }},
    {"fence.fanout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(count(r, n, p, 1, kMaxFanout), c.tree_fanout);
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
    {"security.allow_root_jobs",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(boolean(r, n, p), c.allow_root_jobs);
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
    {"limits.idle_timeout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, AgentConfig& c) {
       return store(milliseconds(r, n, p), c.idle_timeout_ms);
     }},
};

const Key* find_key(const std::string& path) {
  for (const Key& k : kKeys)
    if (path == k.path) return &k;
  return nullptr;
}

bool is_section(const std::string& path) {
  return std::any_of(std::begin(kKeys), std::end(kKeys),
                     [&](const Key& k) { return starts_with(k.path, path + '.'); });
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// "unknown key 'fense' (did you mean 'fence'?)": candidates are every key and section path.
std::string unknown_key(const std::string& path) {
  std::string best;
  size_t best_distance = kTypoDistance + 1;
  for (const Key& k : kKeys) {
    std::string full = k.path;
    for (size_t dot = full.find('.');; dot = full.find('.', dot + 1)) {
      std::string candidate = full.substr(0, dot);  // "fence", then "fence.timeout"
      size_t d = edit_distance(path, candidate);
      if (d < best_distance) best_distance = d, best = candidate;
      if (dot == std::string::npos) break;
    }
  }
  return best.empty() ? cat("unknown key '", path, "'")
                      : cat("unknown key '", path, "' (did you mean '", best, "'?)");
}

// Applies one mapping level; `prefix` is the section's path ("" at the top).
Status walk(const Reader& r, const YAML::Node& map, const std::string& prefix, AgentConfig& cfg) {
  if (map.IsNull()) return {};  // an empty file, or a section whose keys are all commented out
  if (!map.IsMap())
    return r.bad(map, prefix.empty() ? "(top level)" : prefix,
                 cat("expected a mapping of keys, got ", scalar_or_kind(map)));
  std::set<std::string> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) return r.at(kv.first, "expected a key name");
    std::string key = kv.first.Scalar();
    std::string path = prefix.empty() ? key : cat(prefix, '.', key);
    if (!seen.insert(key).second) return r.at(kv.first, cat("duplicate key '", path, "'"));
    Status ok;
    if (const Key* k = find_key(path))
      ok = k->set(r, kv.second, path, cfg);
    else if (is_section(path))
      ok = walk(r, kv.second, path, cfg);
    else
      ok = r.at(kv.first, unknown_key(path));
    if (!ok) return ok;
  }
  return {};
}

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
  Reader reader(source_name);
  try {
    auto ok = walk(reader, YAML::Load(std::string(yaml_text)), "", cfg);
    if (!ok) return ok.error();
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return make_error(cat(source_name, ": YAML syntax error: ", e.msg));
    return make_error(cat(source_name, ':', e.mark.line + 1, ':', e.mark.column + 1,
                          ": YAML syntax error: ", e.msg));
  } catch (const std::exception& e) {
    return make_error(cat(source_name, ": ", e.what()));
  }
  return cfg;
}

Result<AgentConfig> load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(cat("cannot read config file ", path));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return make_error(cat("cannot read config file ", path));
  return parse_config(text.str(), path);
}

std::string describe(const AgentConfig& c) {
  std::string host =
      c.listen_host.find(':') != std::string::npos ? cat('[', c.listen_host, ']') : c.listen_host;
  return cat("node_id: ", yaml_string(c.node_id),                                        //
             "\nlisten: ", yaml_string(cat(host, ':', c.listen_port)),                   //
             "\nlog_level: ", log_level_name(c.log_level),                               //
             "\nadmin_socket: ", yaml_string(c.admin_socket),                            //
             "\npmi:\n  socket_dir: ", yaml_string(c.pmi_socket_dir),                    //
             "\nfence:\n  timeout: ", seconds(c.fence_timeout_ms),                       //
             "\n  fanout: ", c.tree_fanout,                                              //
             "\nlinks:\n  heartbeat_interval: ", seconds(c.heartbeat_interval_ms),       //
             "\n  heartbeat_misses: ", c.heartbeat_misses,                               //
             "\ncompat:\n  set_slurm_env: ", c.compat_set_slurm_env ? "true" : "false",  //
             "\nsecurity:\n  ",
             c.key_file.empty() ? "# key_file: not set (the agent refuses to start without one)"
                                : "key_file: " + yaml_string(c.key_file),
             "\n  allow_root_jobs: ", c.allow_root_jobs ? "true" : "false",  //
             "\n  handshake_timeout: ", seconds(c.handshake_timeout_ms),     //
             "\nlimits:\n  max_ranks_per_node: ", c.max_ranks_per_node,      //
             "\n  max_world_size: ", c.max_world_size,                       //
             "\n  max_connections: ", c.max_connections,                     //
             "\n  idle_timeout: ", seconds(c.idle_timeout_ms), '\n');
}

}  // namespace lattice::config
