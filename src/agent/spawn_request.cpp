#include "agent/spawn_request.hpp"

#include <algorithm>

#include "proc/environment.hpp"

namespace lattice::agent {

wire::SpawnRequest spawn_request(const std::string& launch_id, const pmix::SpawnCall& call) {
  wire::SpawnRequest out;
  out.launch_id = launch_id;
  out.rank = call.rank < 0 ? 0 : static_cast<uint32_t>(call.rank);
  out.workdir = call.workdir;
  for (const auto& in : call.apps) {
    wire::Application app;
    app.entrypoint = in.cmd;
    if (in.argv.size() > 1) app.args.assign(in.argv.begin() + 1, in.argv.end());
    for (const auto& var : in.env) {
      auto eq = var.find('=');
      if (eq == 0 || eq == std::string::npos) continue;
      std::string name = var.substr(0, eq);
      if (proc::reserved_env_name(name)) continue;
      app.env.emplace_back(std::move(name), var.substr(eq + 1));
    }
    app.size = in.maxprocs < 0 ? 0 : static_cast<uint32_t>(in.maxprocs);
    if (out.workdir.empty()) out.workdir = in.cwd;
    for (const auto& host : in.hosts)
      if (std::find(out.hosts.begin(), out.hosts.end(), host) == out.hosts.end())
        out.hosts.push_back(host);
    if (!in.hostfile.empty() &&
        std::find(out.hostfiles.begin(), out.hostfiles.end(), in.hostfile) == out.hostfiles.end())
      out.hostfiles.push_back(in.hostfile);
    out.apps.push_back(std::move(app));
  }
  return out;
}

}  // namespace lattice::agent
