// The fence simulation (see fence_sim.hpp). Chunks travel behind shared pointers: a SendDown
// goes to every child as one object, and each receiving Reducer gets its own copy only when
// its turn comes (a hollow chunk's copy costs nothing).
#include "fence_sim.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "fence/reducer.hpp"
#include "fence/tree.hpp"

namespace lattice::sim {
namespace {

struct Size {
  size_t keys = 0;
  size_t payload = 0;  // key + value bytes
};

Size size_of(const fence::Chunk& chunk) {
  Size s{chunk.keys, 0};
  for (const auto& [key, value] : fence::store_of({chunk}).entries)
    s.payload += key.size() + value.size();
  return s;
}

class FenceSim {
 public:
  FenceSim(const Model& model, const FenceSetup& setup)
      : setup_(setup),
        model_(model),
        cluster_(queue_, model, setup.nodes),
        tree_(setup.nodes, 0, setup.fanout),
        done_(static_cast<size_t>(setup.nodes), -1),
        keys_(static_cast<size_t>(setup.nodes), 0) {
    reducers_.reserve(static_cast<size_t>(setup.nodes));
    for (int n = 0; n < setup.nodes; ++n) reducers_.emplace_back(n, tree_, setup.chunk_bytes);
  }

  FenceResult run() {
    for (int n = 0; n < setup_.nodes; ++n)
      cluster_.on_cpu(n, 0, [this](Cpu& cpu) {
        cpu.spend(model_.rank_in_us * setup_.ranks_per_node);
        apply(cpu, reducers_[static_cast<size_t>(cpu.node)].local_ready(1, puts(cpu.node)));
      });
    queue_.run();
    FenceResult r;
    r.root_in_us = root_in_;
    r.depth = tree_.depth();
    r.down_chunks = static_cast<uint32_t>(down_sizes_.size());
    r.store_keys = keys_[0];
    r.messages = cluster_.messages();
    r.bytes = cluster_.bytes();
    for (int n = 0; n < setup_.nodes; ++n) {
      const auto i = static_cast<size_t>(n);
      if (done_[i] < 0) throw std::runtime_error("node " + std::to_string(n) + " never completed");
      if (keys_[i] != r.store_keys)
        throw std::runtime_error("node " + std::to_string(n) + " completed with " +
                                 std::to_string(keys_[i]) + " keys, the root with " +
                                 std::to_string(r.store_keys));
      if (done_[i] >= r.time_us) {
        r.time_us = done_[i];
        r.last_node = n;
      }
    }
    return r;
  }

 private:
  fence::KvList puts(int node) const {
    fence::KvList list;
    for (int j = 0; j < setup_.ranks_per_node; ++j)
      list.emplace_back("f1-" + std::to_string(node * setup_.ranks_per_node + j),
                        std::string(setup_.value_bytes, 'v'));
    return list;
  }

  double wire_bytes(Size s) const {
    return model_.chunk_wire_bytes + static_cast<double>(s.payload) +
           model_.entry_wire_bytes * static_cast<double>(s.keys);
  }

  void apply(Cpu& cpu, std::vector<fence::Action> actions) {
    for (auto& action : actions) {
      if (auto* up = std::get_if<fence::SendUp>(&action))
        send_up(cpu, std::move(up->chunk));
      else if (auto* down = std::get_if<fence::SendDown>(&action))
        send_down(cpu, down->children, std::move(down->chunk));
      else if (auto* done = std::get_if<fence::Complete>(&action))
        complete(cpu, done->merged.entries.size());  // the store itself is dropped with `actions`
      else
        throw std::runtime_error("node " + std::to_string(cpu.node) +
                                 " refused an input: " + std::get<fence::Reject>(action).why);
    }
  }

  void send_up(Cpu& cpu, fence::Chunk chunk) {
    const Size s = size_of(chunk);
    cpu.spend(model_.key_encode_us * static_cast<double>(s.keys));
    auto shared = std::make_shared<fence::Chunk>(std::move(chunk));
    const int from = cpu.node;
    cluster_.send(cpu, tree_.parent(from), wire_bytes(s), [this, from, s, shared](Cpu& to) {
      to.spend(model_.key_recv_us * static_cast<double>(s.keys));
      apply(to, reducers_[static_cast<size_t>(to.node)].from_child(from, std::move(*shared)));
    });
  }

  void send_down(Cpu& cpu, const std::vector<int>& children, fence::Chunk chunk) {
    if (cpu.node == tree_.root()) {
      if (chunk.index == 0) root_in_ = cpu.now;
      down_sizes_.push_back(size_of(chunk));  // the root sends chunks in index order
      if (setup_.method == FenceMethod::hollow) {
        chunk.entries = fence::no_entries();
        chunk.keys = 0;
      }
    }
    const Size s =
        setup_.method == FenceMethod::hollow ? down_sizes_.at(chunk.index) : size_of(chunk);
    cpu.spend(model_.key_encode_us * static_cast<double>(s.keys));  // encoded once for all
    auto shared = std::make_shared<const fence::Chunk>(std::move(chunk));
    for (int child : children)
      cluster_.send(cpu, child, wire_bytes(s), [this, s, shared](Cpu& to) {
        to.spend(model_.key_recv_us * static_cast<double>(s.keys));
        apply(to, reducers_[static_cast<size_t>(to.node)].from_parent(*shared));
      });
  }

  void complete(Cpu& cpu, size_t merged_keys) {
    // A hollow store arrives empty: its keys are the root's chunks' (all of them by now).
    size_t keys = merged_keys;
    if (setup_.method == FenceMethod::hollow && cpu.node != tree_.root()) {
      keys = 0;
      for (Size s : down_sizes_) keys += s.keys;
    }
    cpu.spend(model_.rank_out_us * setup_.ranks_per_node);
    done_[static_cast<size_t>(cpu.node)] = cpu.now;
    keys_[static_cast<size_t>(cpu.node)] = keys;
  }

  FenceSetup setup_;
  Model model_;
  EventQueue queue_;
  Cluster cluster_;
  fence::Tree tree_;
  std::vector<fence::Reducer> reducers_;
  std::vector<double> done_;
  std::vector<size_t> keys_;
  std::vector<Size> down_sizes_;  // by chunk index, measured at the root
  double root_in_ = 0;
};

}  // namespace

FenceResult simulate_fence(const Model& model, const FenceSetup& setup) {
  return FenceSim(model, setup).run();
}

double fence_store_bytes(const FenceSetup& setup) {
  const double keys = static_cast<double>(setup.nodes) * setup.ranks_per_node;
  return keys * (static_cast<double>(setup.value_bytes) + 8);
}

}  // namespace lattice::sim
