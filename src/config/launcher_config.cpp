#include "config/launcher_config.hpp"

#include "base/strings.hpp"
#include "config/yaml_reader.hpp"

namespace lattice::config {
namespace {

constexpr int64_t kMaxAttempts = 10;

Result<std::string> url(const Reader& r, const YAML::Node& node, const std::string& path) {
  auto s = text(r, node, path);
  if (s && !starts_with(*s, "http://") && !starts_with(*s, "https://"))
    return r.bad(node, path, cat("expected an http:// or https:// URL, got '", *s, "'"));
  return s;
}

using Key = config::Key<LauncherConfig>;
const Key kKeys[] = {
    {"fabric.url", [](const Reader& r, const YAML::Node& n, const std::string& p,
                      LauncherConfig& c) { return store(url(r, n, p), c.fabric_url); }},
    {"fabric.token_file",
     [](const Reader& r, const YAML::Node& n, const std::string& p, LauncherConfig& c) {
       return store(text(r, n, p), c.fabric_token_file);
     }},
    {"fabric.vni", [](const Reader& r, const YAML::Node& n, const std::string& p,
                      LauncherConfig& c) { return store(count(r, n, p, 1, kMaxVni), c.vni); }},
    {"fabric.connect_timeout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, LauncherConfig& c) {
       return store(milliseconds(r, n, p), c.fabric_connect_timeout_ms);
     }},
    {"fabric.timeout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, LauncherConfig& c) {
       return store(milliseconds(r, n, p), c.fabric_timeout_ms);
     }},
    {"fabric.attempts",
     [](const Reader& r, const YAML::Node& n, const std::string& p, LauncherConfig& c) {
       return store(count(r, n, p, 1, kMaxAttempts), c.fabric_attempts);
     }},
    {"fence.fanout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, LauncherConfig& c) {
       return store(count(r, n, p, 1, kMaxFanout), c.fence_fanout);
     }},
    {"fence.timeout",
     [](const Reader& r, const YAML::Node& n, const std::string& p, LauncherConfig& c) {
       return store(milliseconds(r, n, p), c.fence_timeout_ms);
     }},
};

}  // namespace

Result<LauncherConfig> parse_launcher_config(std::string_view yaml_text,
                                             const std::string& source) {
  LauncherConfig config;
  if (auto ok = read_document(yaml_text, source, kKeys, config); !ok) return ok.error();
  return config;
}

Result<LauncherConfig> load_launcher_config(const std::string& path) {
  auto text = read_config_text(path);
  if (!text) return text.error();
  return parse_launcher_config(*text, path);
}

}  // namespace lattice::config
