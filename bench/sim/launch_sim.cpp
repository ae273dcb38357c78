// The launch fan-out simulation (see launch_sim.hpp). The agents forward the bytes they got,
// sealed again per link but not re-encoded: that needs each agent to find its own index by its
// node id in the peer list (launch_spec's find_peer) rather than in the request, a small change
// to today's per-node requests that the model assumes for the tree.
#include "launch_sim.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "fence/tree.hpp"

namespace lattice::sim {
namespace {

class LaunchSim {
 public:
  LaunchSim(const Model& model, const LaunchSetup& setup)
      : setup_(setup),
        model_(model),
        cluster_(queue_, model, setup.agents + 1),
        tree_(setup.agents + 1, 0,
              setup.fanout <= 0 || setup.fanout > setup.agents ? setup.agents : setup.fanout),
        pending_(static_cast<size_t>(setup.agents) + 1, 0),
        done_(static_cast<size_t>(setup.agents) + 1, -1) {}

  LaunchResult run() {
    cluster_.on_cpu(0, 0, [this](Cpu& cpu) { reach(cpu); });
    queue_.run();
    LaunchResult r;
    r.depth = tree_.depth();
    r.messages = cluster_.messages();
    r.bytes = cluster_.bytes();
    r.launcher_cpu_us = cluster_.busy_us(0);
    for (int n = 1; n <= setup_.agents; ++n) {
      const double t = done_[static_cast<size_t>(n)];
      if (t < 0) throw std::runtime_error("agent " + std::to_string(n) + " never spawned");
      if (t >= r.time_us) {
        r.time_us = t;
        r.last_agent = n;
      }
    }
    return r;
  }

 private:
  // `cpu.node` holds the request: pass it on to every child, then spawn (agents only).
  void reach(Cpu& cpu) {
    const std::vector<int> children = tree_.children(cpu.node);
    pending_[static_cast<size_t>(cpu.node)] = children.size();
    if (children.empty()) return spawn(cpu);
    for (int child : children) {
      if (setup_.warm_links) {
        deliver(cpu, child);
        continue;
      }
      cluster_.connect(cpu, [this, child](Cpu& c) { handshake(c, child); });
    }
  }

  // The three handshake messages, each side's CPU split evenly over its two turns; the
  // request follows the initiator's last message on the same link.
  void handshake(Cpu& cpu, int child) {
    const double half_i = model_.handshake_initiator_us / 2;
    const double half_r = model_.handshake_responder_us / 2;
    const double bytes = model_.handshake_msg_bytes;
    cpu.spend(half_i);
    cluster_.send(cpu, child, bytes, [this, child, half_i, half_r, bytes](Cpu& r) {
      r.spend(half_r);
      cluster_.send(r, tree_.parent(child), bytes, [this, child, half_i, half_r, bytes](Cpu& i) {
        i.spend(half_i);
        cluster_.send(i, child, bytes, [half_r](Cpu& r2) { r2.spend(half_r); });
        deliver(i, child);
      });
    });
  }

  void deliver(Cpu& cpu, int child) {
    if (cpu.node == 0) cpu.spend(setup_.encode_us);
    cluster_.send(cpu, child, setup_.request_bytes, [this](Cpu& r) {
      r.spend(setup_.decode_us);
      reach(r);
    });
    if (--pending_[static_cast<size_t>(cpu.node)] == 0) spawn(cpu);
  }

  void spawn(Cpu& cpu) {
    if (cpu.node == 0) return;  // the launcher runs no ranks
    cpu.spend(model_.spawn_us * setup_.ranks_per_node);
    done_[static_cast<size_t>(cpu.node)] = cpu.now;
  }

  LaunchSetup setup_;
  Model model_;
  EventQueue queue_;
  Cluster cluster_;
  fence::Tree tree_;
  std::vector<size_t> pending_;  // children not yet sent the request, per node
  std::vector<double> done_;     // when each agent finished spawning
};

}  // namespace

LaunchResult simulate_launch(const Model& model, const LaunchSetup& setup) {
  return LaunchSim(model, setup).run();
}

}  // namespace lattice::sim
