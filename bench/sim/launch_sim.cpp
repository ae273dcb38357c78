// The launch fan-out simulation (see launch_sim.hpp): the star, or a relayed launch as
// lattice launch --launch tree runs it (agent/launch_relay.hpp). A relay copies the request it
// got once per child with the child's node index, so every sender pays the encoding.
#include "launch_sim.hpp"

#include <algorithm>
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
        star_(setup.fanout <= 0 || setup.fanout >= setup.agents),
        tree_(setup.agents, 0, star_ ? std::max(1, setup.agents - 1) : setup.fanout),
        pending_(static_cast<size_t>(setup.agents) + 1, 0),
        done_(static_cast<size_t>(setup.agents) + 1, -1) {}

  LaunchResult run() {
    cluster_.on_cpu(0, 0, [this](Cpu& cpu) { reach(cpu); });
    queue_.run();
    LaunchResult r;
    r.depth = star_ ? 1 : tree_.depth() + 1;
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
  // Simulated node 0 is the launcher; agent a is node a + 1, the head (agent 0) the root of
  // the fence tree. The star: the launcher's children are every agent. Relayed: the head.
  std::vector<int> children_of(int node) const {
    std::vector<int> out;
    if (node == 0) {
      for (int a = 0; a < (star_ ? setup_.agents : 1); ++a) out.push_back(a + 1);
      return out;
    }
    if (star_) return out;
    for (int a : tree_.children(node - 1)) out.push_back(a + 1);
    return out;
  }
  int parent_of(int node) const {
    if (star_ || node == 1) return 0;
    return tree_.parent(node - 1) + 1;
  }

  // `cpu.node` holds the request: pass it on to every child, then spawn (agents only).
  void reach(Cpu& cpu) {
    const std::vector<int> children = children_of(cpu.node);
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
      cluster_.send(r, parent_of(child), bytes, [this, child, half_i, half_r, bytes](Cpu& i) {
        i.spend(half_i);
        cluster_.send(i, child, bytes, [half_r](Cpu& r2) { r2.spend(half_r); });
        deliver(i, child);
      });
    });
  }

  void deliver(Cpu& cpu, int child) {
    cpu.spend(setup_.encode_us);
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
  bool star_;
  fence::Tree tree_;             // over the agents, rooted at the head
  std::vector<size_t> pending_;  // children not yet sent the request, per node
  std::vector<double> done_;     // when each agent finished spawning
};

}  // namespace

LaunchResult simulate_launch(const Model& model, const LaunchSetup& setup) {
  return LaunchSim(model, setup).run();
}

}  // namespace lattice::sim
