#include "config/config.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "base/strings.hpp"

namespace lattice::config {
namespace {

// Seconds in the file, milliseconds inside; bounded so the conversion cannot overflow.
constexpr double kMaxSeconds = 7 * 24 * 3600;

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  Error error(const YAML::Node& node, const std::string& path, const std::string& what) const {
    auto mark = node.Mark();
    std::string where = mark.is_null() ? source_ : cat(source_, ':', mark.line + 1);
    return make_error(cat(where, ": ", path, ": ", what));
  }

  Status keys(const YAML::Node& map, const std::string& path, const std::set<std::string>& known) const {
    if (!map.IsMap()) return error(map, path.empty() ? "(top level)" : path, "expected a mapping");
    for (const auto& kv : map) {
      auto key = kv.first.as<std::string>();
      if (!known.count(key))
        return error(kv.first, path.empty() ? key : cat(path, '.', key),
                     cat("unknown key '", key, "'"));
    }
    return {};
  }

  Result<std::string> text(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar() || node.Scalar().empty()) return error(node, path, "expected a non-empty string");
    return node.Scalar();
  }

  Result<double> seconds(const YAML::Node& node, const std::string& path) const {
    char* end = nullptr;
    std::string s = node.IsScalar() ? node.Scalar() : "";
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !(v > 0) || v > kMaxSeconds)
      return error(node, path, cat("expected a number of seconds > 0, got '", s, "'"));
    return v;
  }

  Result<uint32_t> count(const YAML::Node& node, const std::string& path, int64_t lo, int64_t hi) const {
    auto v = node.IsScalar() ? parse_int(node.Scalar()) : std::nullopt;
    if (!v || *v < lo || *v > hi)
      return error(node, path, cat("expected a whole number from ", lo, " to ", hi, ", got '",
                                   node.IsScalar() ? node.Scalar() : "(not a scalar)", "'"));
    return static_cast<uint32_t>(*v);
  }

  Result<bool> boolean(const YAML::Node& node, const std::string& path) const {
    std::string s = node.IsScalar() ? node.Scalar() : "";
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
    return error(node, path, cat("expected true or false, got '", s, "'"));
  }

 private:
  std::string source_;
};

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  return buf;
}

uint32_t to_ms(double seconds) { return static_cast<uint32_t>(std::llround(seconds * 1000)); }

// Applies the document to `cfg`; every failure names its key path.
Status apply(const YAML::Node& root, const Reader& r, AgentConfig& cfg) {
  if (!root || root.IsNull()) return {};
  if (auto ok = r.keys(root, "", {"node_id", "listen", "log_level", "admin_socket", "pmi", "fence",
                                  "links", "compat"});
      !ok)
    return ok;
#define TAKE(expr, target)         \
  do {                             \
    auto v_ = (expr);              \
    if (!v_) return v_.error();    \
    target = v_.value();           \
  } while (0)
  if (root["node_id"]) {
    TAKE(r.text(root["node_id"], "node_id"), cfg.node_id);
    if (cfg.node_id.find(',') != std::string::npos)
      return r.error(root["node_id"], "node_id", "must not contain ','");
  }
  if (root["listen"]) {
    std::string s;
    TAKE(r.text(root["listen"], "listen"), s);
    auto hp = parse_host_port(s);
    if (!hp) return r.error(root["listen"], "listen", cat("expected HOST:PORT, got '", s, "'"));
    cfg.listen_host = hp->host;
    cfg.listen_port = hp->port;
  }
  if (root["log_level"]) {
    std::string s;
    TAKE(r.text(root["log_level"], "log_level"), s);
    auto level = parse_log_level(s);
    if (!level)
      return r.error(root["log_level"], "log_level",
                     cat("expected error, warn, info, debug or trace, got '", s, "'"));
    cfg.log_level = *level;
  }
  if (root["admin_socket"]) TAKE(r.text(root["admin_socket"], "admin_socket"), cfg.admin_socket);
  if (auto pmi = root["pmi"]) {
    if (auto ok = r.keys(pmi, "pmi", {"socket_dir"}); !ok) return ok;
    if (pmi["socket_dir"]) TAKE(r.text(pmi["socket_dir"], "pmi.socket_dir"), cfg.pmi_socket_dir);
  }
  if (auto fence = root["fence"]) {
    if (auto ok = r.keys(fence, "fence", {"timeout", "fanout"}); !ok) return ok;
    double secs = 0;
    if (fence["timeout"]) {
      TAKE(r.seconds(fence["timeout"], "fence.timeout"), secs);
      cfg.fence_timeout_ms = to_ms(secs);
    }
    if (fence["fanout"]) TAKE(r.count(fence["fanout"], "fence.fanout", 1, 1 << 16), cfg.tree_fanout);
  }
  if (auto links = root["links"]) {
    if (auto ok = r.keys(links, "links", {"heartbeat_interval", "heartbeat_misses"}); !ok) return ok;
    double secs = 0;
    if (links["heartbeat_interval"]) {
      TAKE(r.seconds(links["heartbeat_interval"], "links.heartbeat_interval"), secs);
      cfg.heartbeat_interval_ms = to_ms(secs);
    }
    if (links["heartbeat_misses"])
      TAKE(r.count(links["heartbeat_misses"], "links.heartbeat_misses", 1, 1000), cfg.heartbeat_misses);
  }
  if (auto compat = root["compat"]) {
    if (auto ok = r.keys(compat, "compat", {"set_slurm_env"}); !ok) return ok;
    if (compat["set_slurm_env"])
      TAKE(r.boolean(compat["set_slurm_env"], "compat.set_slurm_env"), cfg.compat_set_slurm_env);
  }
#undef TAKE
  return {};
}

}  // namespace

Result<AgentConfig> parse_config(std::string_view yaml_text, const std::string& source_name) {
  AgentConfig cfg;
  cfg.node_id = host_name();
  Reader reader(source_name);
  try {
    YAML::Node root = YAML::Load(std::string(yaml_text));
    auto ok = apply(root, reader, cfg);
    if (!ok) return ok.error();
  } catch (const YAML::Exception& e) {
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
  return parse_config(text.str(), path);
}

std::string describe(const AgentConfig& c) {
  return cat("node_id: ", c.node_id, "\nlisten: ", c.listen_host, ':', c.listen_port,
             "\nlog_level: ", log_level_name(c.log_level), "\nadmin_socket: ", c.admin_socket,
             "\npmi:\n  socket_dir: ", c.pmi_socket_dir, "\nfence:\n  timeout: ",
             c.fence_timeout_ms / 1000.0, "\n  fanout: ", c.tree_fanout,
             "\nlinks:\n  heartbeat_interval: ", c.heartbeat_interval_ms / 1000.0,
             "\n  heartbeat_misses: ", c.heartbeat_misses,
             "\ncompat:\n  set_slurm_env: ", c.compat_set_slurm_env ? "true" : "false", '\n');
}

}  // namespace lattice::config
