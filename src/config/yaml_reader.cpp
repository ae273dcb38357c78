// yaml_reader: yaml-cpp reports problems by throwing; nothing leaves this file but an Error.
#include "config/yaml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>

#include "base/strings.hpp"
#include "base/suggest.hpp"

namespace lattice::config {
namespace {

// Unknown keys this close to a known one (edits) get a "did you mean" hint.
constexpr size_t kTypoDistance = 2;

using Apply = std::function<Status(const Reader&, size_t, const YAML::Node&, const std::string&)>;

// Index of the key at `path`, or paths.size().
size_t find_key(const std::vector<const char*>& paths, const std::string& path) {
  for (size_t i = 0; i < paths.size(); ++i)
    if (path == paths[i]) return i;
  return paths.size();
}

bool is_section(const std::vector<const char*>& paths, const std::string& path) {
  return std::any_of(paths.begin(), paths.end(),
                     [&](const char* k) { return starts_with(k, path + '.'); });
}

// "unknown key 'fense' (did you mean 'fence'?)": candidates are every key and section path.
std::string unknown_key(const std::vector<const char*>& paths, const std::string& path) {
  std::string best;
  size_t best_distance = kTypoDistance + 1;
  for (const char* k : paths) {
    std::string full = k;
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
Status walk(const Reader& r, const YAML::Node& map, const std::string& prefix,
            const std::vector<const char*>& paths, const Apply& apply) {
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
    if (size_t i = find_key(paths, path); i < paths.size())
      ok = apply(r, i, kv.second, path);
    else if (is_section(paths, path))
      ok = walk(r, kv.second, path, paths, apply);
    else
      ok = r.at(kv.first, unknown_key(paths, path));
    if (!ok) return ok;
  }
  return {};
}

}  // namespace

Error Reader::at(const YAML::Node& node, const std::string& what) const {
  auto mark = node.Mark();
  return make_error(mark.is_null() ? cat(source_, ": ", what)
                                   : cat(source_, ':', mark.line + 1, ": ", what));
}

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

Status walk_document(std::string_view yaml_text, const std::string& source,
                     const std::vector<const char*>& paths, const Apply& apply) {
  Reader reader(source);
  try {
    return walk(reader, YAML::Load(std::string(yaml_text)), "", paths, apply);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return make_error(cat(source, ": YAML syntax error: ", e.msg));
    return make_error(
        cat(source, ':', e.mark.line + 1, ':', e.mark.column + 1, ": YAML syntax error: ", e.msg));
  } catch (const std::exception& e) {
    return make_error(cat(source, ": ", e.what()));
  }
}

Result<std::string> read_config_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(cat("cannot read config file ", path));
  // Read at most one byte past the limit: a larger file is refused without being held.
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return make_error(cat("cannot read config file ", path));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes)
    return make_error(cat("config file ", path, " is larger than ", kMaxConfigBytes, " bytes"));
  return text;
}

}  // namespace lattice::config
