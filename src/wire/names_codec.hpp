// Name publishing between agents (PmiName): a node's request to the launch's head agent, which
// holds the names, and the head's answer.
#pragma once

#include <cstdint>
#include <string>

#include "lattice.capnp.h"
#include "pmi/server.hpp"
#include "rpc/outgoing.hpp"

namespace lattice::wire {

// A name request to the launch's head agent, or its answer.
struct NameMessage {
  std::string launch_id;
  pmi::NameOp op = pmi::NameOp::lookup;
  std::string name;
  std::string port;
  uint64_t tag = 0;  // the asker's
  bool is_answer = false;
  std::string error;
};

rpc::Outgoing name_message(const NameMessage& message);
NameMessage decode_name(schema::PmiName::Reader m);

}  // namespace lattice::wire
