// PMIx events and job control between the agents of a launch (PmixEvent, PmixControl): pure
// codecs over the schema's readers. Decoding bounds every list and string (pmix/server.hpp's
// kMaxEvent*): an authenticated peer is still not trusted with our memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "lattice.capnp.h"
#include "pmix/server.hpp"
#include "rpc/outgoing.hpp"

namespace lattice::agent {

struct PmixEventMessage {
  std::string launch_id;
  pmix::EventNotice notice;
};

rpc::Outgoing pmix_event_message(const PmixEventMessage& message);
Result<PmixEventMessage> decode_pmix_event(schema::PmixEvent::Reader reader);

// What one node is asked to do to its own ranks of a launch.
struct PmixControlMessage {
  enum class Action : uint8_t { signal, kill, terminate };
  std::string launch_id;
  Action action = Action::signal;
  int signum = 0;
  std::vector<int> ranks;  // empty: every rank of the node
};

rpc::Outgoing pmix_control_message(const PmixControlMessage& message);
Result<PmixControlMessage> decode_pmix_control(schema::PmixControl::Reader reader);

}  // namespace lattice::agent
