#include "launcher/node_choice.hpp"

#include <algorithm>

#include "base/hostlist.hpp"
#include "base/strings.hpp"

namespace lattice::launcher {
namespace {

constexpr size_t kMaxNames = 1 << 20;

// The nodes' ids, for an error: the first few.
std::string some_of(const std::vector<std::string>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < 8; ++i) out += cat(i ? ", " : "", ids[i]);
  return ids.size() > 8 ? cat(out, ", ...") : out;
}

// Marks `ids` that `list` names; an unknown name is an error.
Status mark(const std::vector<std::string>& ids, const char* flag, const std::string& list,
            std::vector<bool>& named) {
  auto names = HostList::parse(list, kMaxNames);
  if (!names) return make_error(cat(flag, ": ", names.error().message));
  Status result;
  names->for_each([&](size_t, std::string_view name) {
    if (!result) return;
    auto at = std::find(ids.begin(), ids.end(), name);
    if (at == ids.end()) {
      result = make_error(
          cat(flag, ": no node '", name, "' among the launch's nodes (", some_of(ids), ")"));
      return;
    }
    named[static_cast<size_t>(at - ids.begin())] = true;
  });
  return result;
}

std::string trim(const std::string& s) {
  size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

}  // namespace

Result<std::vector<size_t>> choose_nodes(const std::vector<std::string>& ids,
                                         const std::string& nodelist, const std::string& exclude) {
  std::vector<bool> listed(ids.size(), nodelist.empty()), excluded(ids.size(), false);
  if (!nodelist.empty())
    if (auto ok = mark(ids, "--nodelist", nodelist, listed); !ok) return ok.error();
  if (!exclude.empty())
    if (auto ok = mark(ids, "--exclude", exclude, excluded); !ok) return ok.error();
  std::vector<size_t> chosen;
  for (size_t i = 0; i < ids.size(); ++i)
    if (listed[i] && !excluded[i]) chosen.push_back(i);
  if (chosen.empty()) return make_error("--nodelist/--exclude leave no node for the launch");
  return chosen;
}

Result<std::string> hostfile_nodelist(std::string_view text, std::string_view what) {
  std::vector<std::string> names;
  for (const auto& full : split(text, '\n')) {
    std::string line = full.substr(0, full.find('#'));
    std::string word = trim(line);
    if (word.empty()) continue;
    // "host:4" (Hydra) and "host slots=4" (Open MPI): the host; slots are not ours to keep.
    word = word.substr(0, std::min(word.find(':'), word.find_first_of(" \t")));
    if (word.empty() || word.find_first_of(",[]") != std::string::npos)
      return make_error(cat(what,
                            ": expected a node id a line (host, host:N or host slots=N), got '",
                            trim(line), "'"));
    if (names.size() == kMaxNames) return make_error(cat(what, ": too many nodes"));
    names.push_back(word);
  }
  if (names.empty()) return make_error(cat(what, ": the file names no node"));
  std::string list;
  for (const auto& name : names) list += cat(list.empty() ? "" : ",", name);
  return list;
}

}  // namespace lattice::launcher
