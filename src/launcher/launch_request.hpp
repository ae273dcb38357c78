// The launch request as this launcher fills it (wire/launch_request.hpp encodes it): from the
// options, the job's user and environment, the layout and the nodes, once per launch; each
// node's copy differs only in its node index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fabric/cxi_client.hpp"
#include "launcher/export_env.hpp"
#include "launcher/job_user.hpp"
#include "launcher/layout.hpp"
#include "launcher/options.hpp"
#include "proc/resource_limits.hpp"
#include "wire/launch_request.hpp"

namespace lattice::launcher {

// What one launch sends every agent besides the options and the layout.
struct JobRequest {
  std::string launch_id;
  JobUserInfo user;
  EnvList exported;       // what --export harvested (AppSetup.environment); --env's values win
  EnvList assigned = {};  // --export's NAME=VALUE items: under every app's --env, over `exported`
  // A relayed launch (fan_out.hpp), and this launcher's handshake name, which the head's children
  // check reports against; a star launch has neither.
  bool relayed = false;
  std::string launcher_name = {};
  // What ranks inherit from this launcher, as srun's tasks: its umask and soft limits.
  uint32_t umask = 022;
  std::vector<proc::Limit> limits = {};
  // --pmi pmix: libpmix's setup data for the launch's namespace (AppSetup.vendor, RFC0029).
  std::string pmix_setup = {};
};

// What one launch of `user` sends besides the options: a new launch id, what --export takes
// from this process's environment, its umask and soft limits (srun's tasks inherit them), and
// for --pmi pmix what libpmix's PMIx_server_setup_application returns (pmix_app_setup.hpp).
Result<JobRequest> job_request(const LaunchOptions& options, JobUserInfo user);

// The request for every node of `peers` (by node index; address each with node_index). The
// peers travel as host lists with one port, and the layout as a rule, when the names and the
// layout allow (then a request's size does not grow with the nodes), else as the lists
// themselves. With `cxi`, the launch's CXI credentials, which must outlive the request (it
// points at their key).
wire::LaunchRequest launch_request(const LaunchOptions& options, const JobRequest& request,
                                   const Layout& layout, const std::vector<wire::PeerInfo>& peers,
                                   const std::string& workdir,
                                   const fabric::CxiCredentials* cxi = nullptr);

}  // namespace lattice::launcher
