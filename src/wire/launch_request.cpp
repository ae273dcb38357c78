#include "wire/launch_request.hpp"

namespace lattice::wire {

rpc::Outgoing relayed_request(schema::LaunchProcessesRequest::Reader request, int node_index) {
  rpc::Outgoing msg;
  msg.envelope().initBody().setLaunchProcesses(request);
  msg.envelope().getBody().getLaunchProcesses().setNodeIndex(static_cast<uint32_t>(node_index));
  // The copy holds the launch's CXI key as the original does: wiped with the message.
  if (request.getCxiCredentials().getAuthKey().size()) msg.mark_secret();
  return msg;
}

}  // namespace lattice::wire
