// The network and CPU model (see model.hpp). A message is two events: its last byte reaching
// the receiver's NIC (taken in order of arrival there, so incast serializes), then its handling
// on the receiver's CPU (in order of delivery).
#include "model.hpp"

#include <algorithm>
#include <utility>

namespace lattice::sim {

Cluster::Cluster(EventQueue& queue, const Model& model, int nodes)
    : queue_(queue), model_(model), nodes_(static_cast<size_t>(nodes)) {}

void Cluster::on_cpu(int node, double at, Work work) {
  queue_.at(at, [this, node, at, work = std::move(work)] {
    Node& n = nodes_[static_cast<size_t>(node)];
    Cpu cpu{node, std::max(at, n.cpu_free)};
    const double start = cpu.now;
    work(cpu);
    n.busy += cpu.now - start;
    n.cpu_free = cpu.now;
  });
}

void Cluster::send(Cpu& cpu, int to, double bytes, Work on_receive) {
  const Model& m = model_;
  cpu.spend(m.send_msg_us + m.seal_msg_us + m.seal_byte_us * bytes);
  const double wire = (bytes + m.frame_overhead_bytes) / m.bandwidth_bytes_per_us;
  Node& from = nodes_[static_cast<size_t>(cpu.node)];
  const double sent = std::max(cpu.now, from.tx_free) + wire;
  from.tx_free = sent;
  ++messages_;
  bytes_ += bytes + m.frame_overhead_bytes;
  // The receiver's NIC: the last byte is in when the wire delivered it and the NIC finished
  // taking in whatever came before.
  queue_.at(sent + m.latency_us, [this, to, bytes, wire, on_receive = std::move(on_receive)] {
    Node& n = nodes_[static_cast<size_t>(to)];
    const double in = std::max(queue_.now(), n.rx_free + wire);
    n.rx_free = in;
    on_cpu(to, in, [this, bytes, on_receive = on_receive](Cpu& c) {
      c.spend(model_.recv_msg_us + model_.open_msg_us + model_.open_byte_us * bytes);
      on_receive(c);
    });
  });
}

void Cluster::connect(Cpu& cpu, Work then) {
  cpu.spend(model_.connect_us);
  on_cpu(cpu.node, cpu.now + 2 * model_.latency_us, std::move(then));
}

}  // namespace lattice::sim
