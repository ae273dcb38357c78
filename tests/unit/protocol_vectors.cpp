#include "protocol_vectors.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "base/strings.hpp"

namespace lattice::testing {
namespace {

constexpr std::string_view kFence = "```";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

Result<ProtocolVectors> ProtocolVectors::load(std::string_view tag) {
  std::ifstream file(LATTICE_PROTOCOL_DOC);
  if (!file) return make_error(cat("cannot read ", LATTICE_PROTOCOL_DOC));
  const std::string opening = cat(kFence, "vectors ", tag);
  std::map<std::string, std::string> hex;
  std::string line, name;
  bool inside = false;
  for (int number = 1; std::getline(file, line); ++number) {
    auto where = [&] { return cat(LATTICE_PROTOCOL_DOC, ':', number, ": "); };
    if (!inside) {
      inside = trim(line) == opening;
      name.clear();
      continue;
    }
    std::string_view text = trim(line);
    if (text == kFence) {
      inside = false;
    } else if (text.empty() || text.front() == '#') {
      continue;
    } else if (line.front() == ' ' && !name.empty() && text.find('=') == std::string_view::npos) {
      hex[name] += text;
    } else {
      auto equals = text.find('=');
      if (equals == std::string_view::npos)
        return make_error(cat(where(), "not `name = hex`: ", line));
      name = trim(text.substr(0, equals));
      if (hex.count(name)) return make_error(cat(where(), "vector ", name, " given twice"));
      hex[name] = trim(text.substr(equals + 1));
    }
  }
  if (inside) return make_error(cat(LATTICE_PROTOCOL_DOC, ": a vectors block is not closed"));
  ProtocolVectors vectors;
  for (const auto& [key, digits] : hex) {
    auto bytes = from_hex(digits);
    if (!bytes) return make_error(cat("vector ", key, " is not hex: ", digits));
    vectors.values_[key] = std::move(*bytes);
  }
  if (vectors.values_.empty())
    return make_error(cat(LATTICE_PROTOCOL_DOC, " has no `", opening, "` block"));
  return vectors;
}

const std::string& ProtocolVectors::bytes(const std::string& name) {
  auto it = values_.find(name);
  REQUIRE_MESSAGE(it != values_.end(), cat("docs/protocol.md has no vector ", name));
  used_.insert(name);
  return it->second;
}

std::vector<std::string> ProtocolVectors::unused() const {
  std::vector<std::string> out;
  for (const auto& [name, value] : values_)
    if (!used_.count(name)) out.push_back(name);
  return out;
}

}  // namespace lattice::testing
