// The escape hatch's messages (lattice-mpi-launcher -> agent -> the node's agent and back), for
// both ends: the client that asks, the agent that routes, the agent that runs. Decoders copy out
// of capnp and bound nothing beyond the session's own limits; callers judge what they got.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

// lattice-mpi-launcher's request (ExecRequest).
struct ExecRequest {
  std::string token;
  std::string node;
  std::vector<std::string> command;
};

// A command for one node of a launch (RemoteExec), or its end (RemoteExecKill: command empty).
struct ExecCommand {
  std::string launch_id;
  uint64_t exec_id = 0;
  std::vector<std::string> command;
};

// Output, or the end, of a remote command (RemoteExecEvent).
struct ExecEvent {
  std::string launch_id;
  uint64_t exec_id = 0;
  bool is_stderr = false;
  std::string data;
  bool exited = false;
  int exit_code = 0;
  int signal = 0;
  std::string error;  // set: refused or not started
};

rpc::Outgoing exec_request(const ExecRequest& request);
ExecRequest decode_exec_request(schema::ExecRequest::Reader in);
rpc::Outgoing remote_exec(const ExecCommand& command);
ExecCommand decode_remote_exec(schema::RemoteExec::Reader in);
rpc::Outgoing remote_exec_kill(const std::string& launch_id, uint64_t exec_id);
ExecCommand decode_remote_exec_kill(schema::RemoteExecKill::Reader in);
rpc::Outgoing exec_event(const ExecEvent& event);
ExecEvent decode_exec_event(schema::RemoteExecEvent::Reader in);

}  // namespace lattice::wire
