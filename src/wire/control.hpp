// What the launcher sends a running launch besides aborts (failure_codec): a signal for its
// ranks (SignalProcesses) and its stdin (StdinChunk).
#pragma once

#include <string>
#include <string_view>

#include "lattice.capnp.h"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

struct Signal {
  std::string launch_id;
  int signum = 0;
};
rpc::Outgoing signal(const Signal& signal);
Signal decode_signal(schema::SignalProcesses::Reader m);

// A piece of the launcher's stdin for the launch's input rank(s); `eof` ends it.
struct StdinChunk {
  std::string launch_id;
  std::string data;
  bool eof = false;
};
rpc::Outgoing stdin_chunk(const std::string& launch_id, std::string_view data, bool eof);
StdinChunk decode_stdin_chunk(schema::StdinChunk::Reader m);

}  // namespace lattice::wire
