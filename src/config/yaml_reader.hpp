// The YAML side shared by every configuration file (the agent's, the launcher's): a Reader that
// places messages at "source:LINE: key.path: what", typed scalar readers with bounds, and a walk
// over a table of dotted key paths that catches unknown keys (with a "did you mean"),
// duplicates and misplaced sections. Private to config/ (it exposes yaml-cpp).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice::config {

// Durations are seconds in the files and milliseconds inside; a week is far beyond any sane
// timeout and keeps the conversion well inside uint32_t.
constexpr double kMaxSeconds = 7 * 24 * 3600;

// Builds "source:LINE: path: what" messages from the node's position in the text.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}
  Error at(const YAML::Node& node, const std::string& what) const;
  Error bad(const YAML::Node& node, const std::string& path, const std::string& what) const {
    return at(node, path + ": " + what);
  }

 private:
  std::string source_;
};

std::string scalar_or_kind(const YAML::Node& node);
// A non-empty string without control bytes.
Result<std::string> text(const Reader& r, const YAML::Node& node, const std::string& path);
// Seconds in the file (at least 0.001, at most kMaxSeconds) -> milliseconds.
Result<uint32_t> milliseconds(const Reader& r, const YAML::Node& node, const std::string& path);
Result<uint32_t> count(const Reader& r, const YAML::Node& node, const std::string& path, int64_t lo,
                       int64_t hi);
Result<bool> boolean(const Reader& r, const YAML::Node& node, const std::string& path);

// Stores a successfully read value; passes an error through.
template <class T, class U>
Status store(Result<T> value, U& target) {
  if (!value) return value.error();
  target = std::move(value.value());
  return {};
}

// One key of a file: its dotted path (the part before a '.' is a section, a nested mapping)
// and what reads it into the config.
template <class Config>
struct Key {
  const char* path;
  Status (*set)(const Reader&, const YAML::Node&, const std::string&, Config&);
};

// Parses `yaml_text` and walks it against `paths`; `apply(i, node, path)` reads key i. YAML
// syntax errors and yaml-cpp's exceptions come back as errors naming the source.
Status walk_document(std::string_view yaml_text, const std::string& source,
                     const std::vector<const char*>& paths,
                     const std::function<Status(const Reader&, size_t, const YAML::Node&,
                                                const std::string&)>& apply);

// The same over a table of keys into one config.
template <class Config, size_t N>
Status read_document(std::string_view yaml_text, const std::string& source,
                     const Key<Config> (&keys)[N], Config& config) {
  std::vector<const char*> paths;
  for (const auto& k : keys) paths.push_back(k.path);
  return walk_document(yaml_text, source, paths,
                       [&](const Reader& r, size_t i, const YAML::Node& node,
                           const std::string& path) { return keys[i].set(r, node, path, config); });
}

// Far beyond any configuration (the annotated examples are a few KiB): a larger file is a
// mistake (or not a config file) and is refused before it is parsed.
constexpr size_t kMaxConfigBytes = 1 << 20;

// The whole file's text, or an error naming it.
Result<std::string> read_config_text(const std::string& path);

}  // namespace lattice::config
