// Measurements of the real code on this machine that set the model's per-message, per-byte and
// per-key costs: the sealed handshake (each side), sealing and opening records, encoding a
// fence chunk and the launch request (launcher/wire) and decoding it (agent/launch_spec).
// CPU-time measurements: the figures vary a little from run to run.
#pragma once

#include "model.hpp"

namespace lattice::sim {

struct Calibration {
  double handshake_initiator_us = 0, handshake_responder_us = 0, handshake_msg_bytes = 0;
  double seal_msg_us = 0, seal_byte_us = 0, open_msg_us = 0, open_byte_us = 0;
  double key_encode_us = 0;  // fence chunk: wire::fence_chunk + rpc::encode_frame, per key
  double key_path_us = 0;    // a leaf's decode + fence::Reducer + pmi::Kvs::publish, per key
  double entry_wire_bytes = 0, chunk_wire_bytes = 0;
};

// Takes about a second.
Calibration calibrate(size_t value_bytes);
void apply(const Calibration& c, Model& model);

// One agent's LaunchProcesses request for `agents` nodes x `ranks_per_node` (block layout, one
// app, a fixed 30-variable exported environment): its encoded size, the launcher's encoding
// (wire::launch_request + framing) and an agent's decoding and checks
// (wire::decode_launch_request, agent::make_launch_spec), medians of a few runs.
struct RequestCost {
  double bytes = 0;
  double encode_us = 0;
  double decode_us = 0;
};
RequestCost measure_request(int agents, int ranks_per_node);

}  // namespace lattice::sim
