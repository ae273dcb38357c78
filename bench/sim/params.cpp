// The parameter list (see params.hpp); the defaults themselves live in Model.
#include "params.hpp"

namespace lattice::sim {

std::vector<Param> model_params() {
  const std::string seal =
      "measured now: secure::Channel records of 100 B and 64 KiB (per record + per byte)";
  const std::string chunk =
      "measured now: wire::fence_chunk + rpc::encode_frame, chunks of 1 and 230 keys";
  const std::string handshake =
      "measured now: secure::Channel handshake, this side's calls (median of 300)";
  return {
      {"latency_us", &Model::latency_us, "µs",
       "given: one hop of a 10 GbE management network, kernel TCP path included"},
      {"bandwidth_bytes_per_us", &Model::bandwidth_bytes_per_us, "B/µs", "given: 10 GbE"},
      {"frame_overhead_bytes", &Model::frame_overhead_bytes, "B",
       "assumed: TCP/IP headers and the secretstream tag per message"},
      {"send_msg_us", &Model::send_msg_us, "µs", "assumed: a write and an event-loop turn"},
      {"recv_msg_us", &Model::recv_msg_us, "µs", "assumed: a read, framing and dispatch"},
      {"seal_msg_us", &Model::seal_msg_us, "µs", seal},
      {"seal_byte_us", &Model::seal_byte_us, "µs/B", seal},
      {"open_msg_us", &Model::open_msg_us, "µs", seal},
      {"open_byte_us", &Model::open_byte_us, "µs/B", seal},
      {"key_recv_us", &Model::key_recv_us, "µs",
       "measured (issue 11 part 2): agent CPU per key per agent in the fence (16 keys per rank "
       "against one key put 16 times), 256 agents, star; charged on every receipt, with sealing "
       "and encoding charged on top (conservative)"},
      {"key_encode_us", &Model::key_encode_us, "µs", chunk},
      {"entry_wire_bytes", &Model::entry_wire_bytes, "B", chunk},
      {"chunk_wire_bytes", &Model::chunk_wire_bytes, "B", chunk},
      {"rank_in_us", &Model::rank_in_us, "µs", "assumed: a rank's PMI fence command, per rank"},
      {"rank_out_us", &Model::rank_out_us, "µs", "assumed: a rank's PMI fence answer, per rank"},
      {"connect_us", &Model::connect_us, "µs", "assumed: socket, connect, loop registration"},
      {"handshake_initiator_us", &Model::handshake_initiator_us, "µs",
       handshake + "; the initiator's key pair shared by its links, as a launcher's"},
      {"handshake_responder_us", &Model::handshake_responder_us, "µs", handshake},
      {"handshake_msg_bytes", &Model::handshake_msg_bytes, "B", handshake},
      {"spawn_us", &Model::spawn_us, "µs",
       "measured (issue 11 part 3): agent CPU per /bin/true launch, 0.78 ms per agent at 256 "
       "agents (1.4 ms before nodes stayed in host lists and other trims), minus the handshake "
       "and the request's decoding; all of it charged before 'spawned' (an upper bound)"},
  };
}

void set_source(std::vector<Param>& params, const std::string& name, std::string source) {
  for (auto& p : params)
    if (name == p.name) p.source = std::move(source);
}

}  // namespace lattice::sim
