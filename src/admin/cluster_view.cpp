#include "admin/cluster_view.hpp"

#include <nlohmann/json.hpp>

#include "base/strings.hpp"

namespace lattice::admin {

namespace {

std::string text_view(const std::vector<AgentAnswer>& answers) {
  std::string out;
  for (const auto& a : answers) {
    std::string heading = cat("== ", printable(a.agent), " (", printable(a.address), ')');
    if (!a.error.empty()) {
      out += cat(heading, ": ", printable(a.error), '\n');
      continue;
    }
    out += heading + '\n';
    for (const auto& line : split(a.status, '\n'))
      if (!line.empty()) out += printable(line) + '\n';
  }
  return out;
}

// An agent's "error: ..." line without its prefix and newline; any other text is not what was
// asked for.
std::string refusal(std::string_view answer) {
  constexpr std::string_view kPrefix = "error: ";
  if (answer.substr(0, kPrefix.size()) != kPrefix) return "its answer is not a JSON object";
  answer.remove_prefix(kPrefix.size());
  while (!answer.empty() && answer.back() == '\n') answer.remove_suffix(1);
  return std::string(answer);
}

std::string json_view(const std::vector<AgentAnswer>& answers) {
  using nlohmann::json;
  json agents = json::array();
  for (const auto& a : answers) {
    json entry = {{"agent", a.agent}, {"address", a.address}};
    // Parsed without exceptions: an agent's answer is a peer's bytes.
    json status = a.error.empty() ? json::parse(a.status, nullptr, false) : json();
    if (!a.error.empty())
      entry["error"] = a.error;
    else if (status.is_discarded() || !status.is_object())
      entry["error"] = refusal(a.status);
    else
      entry["status"] = std::move(status);
    agents.push_back(std::move(entry));
  }
  json out = {{"agents", std::move(agents)}};
  return out.dump(-1, ' ', true, json::error_handler_t::replace) + '\n';
}

}  // namespace

std::string render_cluster(const std::vector<AgentAnswer>& answers, bool json) {
  return json ? json_view(answers) : text_view(answers);
}

}  // namespace lattice::admin
