// `lattice admin status --agents LIST`: every agent of LIST asked at once for what its admin
// socket would answer ("status" or "status-json"), over a sealed link with the cluster key, so
// an operator sees the cluster from a launcher host; rendered by admin/cluster_view.hpp.
#pragma once

#include <string>
#include <vector>

#include "admin/cluster_view.hpp"
#include "launcher/local_agents.hpp"
#include "net/loop.hpp"
#include "secure/credentials.hpp"

namespace lattice::launcher {

// How long an agent has to connect, prove itself and answer.
inline constexpr uint64_t kStatusAnswerMs = 30000;

// One answer per agent, in LIST's order (runs `loop` until all are in or the time is up).
std::vector<admin::AgentAnswer> ask_status(net::Loop& loop, const secure::Credentials& credentials,
                                           const std::vector<AgentAddress>& agents, bool json,
                                           const std::string& launch_id);

}  // namespace lattice::launcher
