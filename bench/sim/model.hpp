// The modeled machine: a cluster management network (per-hop latency, a NIC per node that
// serializes what it sends and what it receives at one bandwidth) and one CPU per node that
// does a node's work one piece at a time, in arrival order. Costs are parameters (Model); the
// engines driven over it decide what is sent when.
#pragma once

#include <functional>
#include <vector>

#include "event_queue.hpp"

namespace lattice::sim {

// Every cost of the model, in microseconds and bytes. The defaults are what main.cpp prints
// with their sources; calibrate.cpp replaces some with measurements of the real code.
struct Model {
  // Network: one hop, one way, including the kernel's TCP path on both ends.
  double latency_us = 15;
  double bandwidth_bytes_per_us = 1250;  // 10 GbE: 1.25 GB/s
  double frame_overhead_bytes = 80;      // per message on the wire: TCP/IP headers, seal tag
  // CPU per message, each side (event-loop turn, syscall, framing), and sealing.
  double send_msg_us = 5;
  double recv_msg_us = 5;
  double seal_msg_us = 0.5;
  double seal_byte_us = 0.001;
  double open_msg_us = 0.5;
  double open_byte_us = 0.001;
  // Fence.
  double key_recv_us = 0.43;     // per key received by an agent (decode, merge, hand-off)
  double key_encode_us = 0.05;   // per key when a chunk is encoded (once for all children)
  double entry_wire_bytes = 24;  // per key on the wire besides its key and value bytes
  double chunk_wire_bytes = 96;  // per chunk message besides its entries (envelope, ids)
  double rank_in_us = 5;         // per local rank entering the fence (its PMI command)
  double rank_out_us = 5;        // per local rank released (its PMI answer)
  // Launch.
  double connect_us = 10;  // socket + connect + loop registration, initiator's CPU
  double handshake_initiator_us = 105;
  double handshake_responder_us = 105;
  double handshake_msg_bytes = 100;  // each of the handshake's three messages
  double spawn_us = 680;             // per local rank: everything the agent does to start it
};

// Where a piece of a node's work is: the node and its CPU's clock, which the work advances.
struct Cpu {
  int node;
  double now;
  void spend(double us) { now += us; }
};

class Cluster {
 public:
  using Work = std::function<void(Cpu&)>;

  Cluster(EventQueue& queue, const Model& model, int nodes);

  // `work` runs on `node`'s CPU once it is free and not before `at` (FIFO per node).
  void on_cpu(int node, double at, Work work);
  // A sealed message of `bytes` (payload) from cpu.node to `to`: the sender's CPU pays the
  // per-message and sealing costs now, its NIC sends when free, the receiver's NIC takes it
  // in when free, and the receiver's CPU pays the per-message and opening costs before
  // `on_receive` runs there.
  void send(Cpu& cpu, int to, double bytes, Work on_receive);
  // The kernel's TCP connect to `to` (SYN, SYN-ACK): no CPU beyond connect_us; `then` runs on
  // the initiator's CPU one round trip later.
  void connect(Cpu& cpu, Work then);

  const Model& model() const { return model_; }
  EventQueue& queue() { return queue_; }
  uint64_t messages() const { return messages_; }
  double bytes() const { return bytes_; }
  double busy_us(int node) const { return nodes_[static_cast<size_t>(node)].busy; }

 private:
  struct Node {
    double cpu_free = 0;  // the CPU is busy until then
    double tx_free = 0;   // the NIC's send side is busy until then
    double rx_free = 0;   // the NIC's receive side is busy until then
    double busy = 0;      // CPU time spent so far
  };

  EventQueue& queue_;
  Model model_;
  std::vector<Node> nodes_;
  uint64_t messages_ = 0;
  double bytes_ = 0;
};

}  // namespace lattice::sim
