// Name publishing between agents (PmiName): a node's request to the launch's head agent, which
// holds the names, as an rpc call; the response carries the port found (an error response says
// why not).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.hpp"
#include "lattice.capnp.h"
#include "pmi/server.hpp"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

struct NameRequest {
  std::string launch_id;
  pmi::NameOp op = pmi::NameOp::lookup;
  std::string name;
  std::string port;  // publish: the port
  // PMIx only (lattice.capnp's PmiName says what each means); the head checks them.
  bool pmix = false;
  std::string nspace;
  int rank = -1;
  uint8_t scope = 0;  // agent::NameScope
  bool first_read = false;
  uint32_t wait_ms = 0;
};

rpc::Outgoing name_request(const NameRequest& request);
NameRequest decode_name(schema::PmiName::Reader m);
// PMIx values travel as bytes (Open MPI publishes binary ones), PMI ports as text.
rpc::Outgoing name_answer(const std::string& port, bool pmix = false);
// The port from the head's response, or why there is none (its error, or the call's).
Result<std::string> decode_name_answer(const Result<schema::Envelope::Reader>& reply);

}  // namespace lattice::wire
