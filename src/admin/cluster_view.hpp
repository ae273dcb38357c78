// `lattice admin status --agents LIST`: several agents' status, asked over sealed links by a
// key holder, shown together. Pure: the launcher gathers the answers; this renders them, as
// text (each agent's status under a heading, every line through printable()) or as one JSON
// document for programs.
#pragma once

#include <string>
#include <vector>

namespace lattice::admin {

struct AgentAnswer {
  std::string agent;    // the node id it proved, or how it was named in LIST
  std::string address;  // HOST:PORT
  std::string status;   // its answer ("status" or "status-json"), when error is empty
  std::string error;    // why there is none: unreachable, refused, or its "error: ..." line
};

// JSON: {"agents": [{"agent", "address", "status": {...}} or {"agent", "address", "error"}]},
// in ASCII. An answer that is not JSON where JSON was asked for is shown as an error.
std::string render_cluster(const std::vector<AgentAnswer>& answers, bool json);

}  // namespace lattice::admin
