// `lattice launch` inside an allocation, without the cluster key: it reaches its node's agent
// on the user door (a local Unix socket, where the kernel tells the agent who is asking), learns
// the allocation's nodes there, and has that agent relay the launch to them over its sealed
// links (agent/authority.hpp says what the agents check).
#pragma once

#include <string>
#include <vector>

#include "base/result.hpp"
#include "launcher/job_user.hpp"
#include "launcher/local_agents.hpp"
#include "wire/allocation.hpp"

namespace lattice::launcher {

// Where the user door is: $LATTICE_USER_SOCKET (every process of an allocation has it), else
// the agent's default.
std::string user_door_path();

// The allocation `id`, as the agent behind `socket` describes it to this user.
Result<wire::AllocationInfo> ask_allocation(const std::string& socket, const std::string& id);

// The allocation's user, as its launches run.
JobUserInfo allocation_user(const wire::AllocationInfo& info);

// The nodes a launch on `nodes` of them (0: all) takes: the asking agent's node first (it
// relays the launch: the head of its fence tree), then the others in the allocation's order.
Result<std::vector<AgentAddress>> door_nodes(const wire::AllocationInfo& info, int nodes);

}  // namespace lattice::launcher
