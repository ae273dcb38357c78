#include "launcher/launch_files.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/strings.hpp"
#include "launcher/node_choice.hpp"
#include "launcher/program_files.hpp"

namespace lattice::launcher {
namespace {

Result<std::string> read_text(const char* flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(cat(flag, ": cannot read ", path, ": ", std::strerror(errno)));
  std::string text;
  text.resize(kMaxProgramFileBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxProgramFileBytes)
    return make_error(cat(flag, ": ", path, " is over ", kMaxProgramFileBytes, " bytes"));
  return text;
}

}  // namespace

Status read_launch_files(LaunchOptions& o) {
  if (!o.hostfile.empty()) {
    auto text = read_text("-f", o.hostfile);
    if (!text) return text.error();
    auto list = hostfile_nodelist(*text);
    if (!list) return list.error();
    o.nodelist = *list;
  }
  if (o.multi_prog || !o.configfile.empty()) {
    const char* flag = o.multi_prog ? "--multi-prog" : "-configfile";
    auto text = read_text(flag, o.multi_prog ? o.apps.front().program : o.configfile);
    if (!text) return text.error();
    return use_program_file(o, *text);
  }
  return {};
}

Result<std::vector<AgentAddress>> chosen_nodes(const LaunchOptions& o,
                                               std::vector<AgentAddress> nodes) {
  if (o.nodelist.empty() && o.exclude.empty()) return nodes;
  std::vector<std::string> ids;
  for (const auto& node : nodes) {
    if (!node.name_known)
      return make_error(
          cat("-w/-x choose nodes by node id: give every agent's "
              "(--agents NAME=HOST:PORT); ",
              node.host, ':', node.port, " has none"));
    ids.push_back(node.node_id);
  }
  auto chosen = choose_nodes(ids, o.nodelist, o.exclude);
  if (!chosen) return chosen.error();
  std::vector<AgentAddress> out;
  for (size_t i : *chosen) out.push_back(std::move(nodes[i]));
  return out;
}

}  // namespace lattice::launcher
