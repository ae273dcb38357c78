// In-memory network of fence Reducers for the tests: a queue of messages that can be delivered
// in order or at random (reordered), duplicated, held back until everything else settled
// (delayed) and dropped. Local readiness is an event in the same queue, so a node's ranks
// entering epoch E+1 interleaves with its children's E+1 contributions.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "fence/reducer.hpp"
#include "kv_views.hpp"

namespace lattice::fence::test {

struct Message {
  enum Kind { ready, up, down } kind = ready;
  int from = 0;
  int to = 0;
  uint64_t epoch = 0;
  Chunk chunk;        // up and down
  KvList puts;        // ready
  bool copy = false;  // a duplicate is never duplicated again, so runs end
  bool held = false;  // delayed once already
};

// One from_parent call as an intermediate or leaf node saw it.
struct DownDelivery {
  uint64_t epoch;
  uint32_t index;
  uint32_t count;
  size_t forwarded;  // SendDown actions it produced
  bool completed;    // it produced the Complete
};

struct SimOptions {
  int nnodes = 1;
  int root = 0;
  int fanout = 2;
  uint64_t epochs = 3;
  uint64_t seed = 1;
  bool reorder = false;
  double duplicate = 0.0;  // probability that a delivered message is delivered again later
  size_t chunk_bytes = kDefaultChunkBytes;
  int puts_per_node = 3;
  size_t value_bytes = 8;
  std::function<bool(const Message&)> drop;   // dropped for good
  std::function<bool(const Message&)> delay;  // held until the queue is otherwise empty
};

// Puts of `node` in `epoch`: its own keys, plus "clash.all" (every node) and "clash.odd" (odd
// nodes) whose winners test the merge rule, plus a within-node duplicate where later wins.
inline KvList puts_for(const SimOptions& o, int node, uint64_t epoch) {
  const std::string tag = "e" + std::to_string(epoch) + ".n" + std::to_string(node);
  KvList puts;
  for (int j = 0; j < o.puts_per_node; ++j) {
    std::string value(o.value_bytes, static_cast<char>('a' + (node + j) % 26));
    puts.emplace_back(tag + "." + std::to_string(j), std::move(value));
  }
  puts.emplace_back(tag + ".twice", "first");
  puts.emplace_back("clash.all", tag);
  if (node % 2) puts.emplace_back("clash.odd", tag);
  puts.emplace_back(tag + ".twice", "second");
  return puts;
}

// What every node must end up with for `epoch`: the union, with clashes resolved as
// reducer.hpp promises (latest in post-order of the tree wins; later local entry wins).
inline KvList expected_store(const SimOptions& o, const Tree& tree, uint64_t epoch) {
  std::vector<int> post_order;
  std::function<void(int)> visit = [&](int node) {
    for (int kid : tree.children(node)) visit(kid);
    post_order.push_back(node);
  };
  visit(tree.root());
  std::map<std::string, std::string> store;
  for (int node : post_order)
    for (auto& [key, value] : puts_for(o, node, epoch)) store[key] = value;
  return KvList(store.begin(), store.end());
}

class Sim {
  // Declared first: the constructor's initialisers below read them.
  SimOptions o_;
  Tree tree_;
  std::mt19937_64 rng_;
  std::deque<Message> queue_;
  std::vector<Message> held_;

 public:
  explicit Sim(SimOptions options)
      : o_(std::move(options)),
        tree_(o_.nnodes, o_.root, o_.fanout),
        rng_(o_.seed),
        completed(o_.nnodes),
        down_log(o_.nnodes) {
    for (int node = 0; node < o_.nnodes; ++node) {
      reducers.emplace_back(node, tree_, o_.chunk_bytes);
      queue_ready(node, 1);
    }
  }

  const Tree& tree() const { return tree_; }

  // Delivers until nothing is queued or held.
  void run() {
    while (!queue_.empty() || !held_.empty()) {
      if (queue_.empty()) {
        for (auto& m : held_) queue_.push_back(std::move(m));
        held_.clear();
      }
      deliver(take_next());
    }
  }

  std::vector<Reducer> reducers;
  std::vector<std::map<uint64_t, KvList>> completed;  // per node: epoch -> merged store
  std::vector<std::vector<DownDelivery>> down_log;    // per node, in delivery order
  std::vector<Reject> rejects;
  std::vector<Message> dropped;
  std::map<uint64_t, uint32_t> down_chunk_count;    // epoch -> chunks of the merged store
  std::map<uint64_t, uint32_t> max_up_chunk_count;  // epoch -> largest upward chunk count

 private:
  void queue_ready(int node, uint64_t epoch) {
    Message m;
    m.kind = Message::ready;
    m.from = m.to = node;
    m.epoch = epoch;
    m.puts = puts_for(o_, node, epoch);
    queue_.push_back(std::move(m));
  }

  Message take_next() {
    size_t i = 0;
    if (o_.reorder) i = std::uniform_int_distribution<size_t>(0, queue_.size() - 1)(rng_);
    std::swap(queue_[i], queue_.front());
    Message m = std::move(queue_.front());
    queue_.pop_front();
    return m;
  }

  void deliver(Message m) {
    if (o_.drop && o_.drop(m)) {
      dropped.push_back(std::move(m));
      return;
    }
    if (o_.delay && !m.held && o_.delay(m)) {
      m.held = true;
      held_.push_back(std::move(m));
      return;
    }
    if (!m.copy && std::bernoulli_distribution(o_.duplicate)(rng_)) {
      Message again = m;
      again.copy = true;
      queue_.push_back(std::move(again));
    }
    Reducer& r = reducers[m.to];
    switch (m.kind) {
      case Message::ready:
        apply(m.to, r.local_ready(m.epoch, std::move(m.puts)));
        break;
      case Message::up:
        apply(m.to, r.from_child(m.from, std::move(m.chunk)));
        break;
      case Message::down: {
        DownDelivery d{m.chunk.epoch, m.chunk.index, m.chunk.count, 0, false};
        auto actions = r.from_parent(std::move(m.chunk));
        bool rejected = false;
        for (const auto& a : actions) {
          if (auto* down = std::get_if<SendDown>(&a)) d.forwarded += down->children.size();
          d.completed = d.completed || std::holds_alternative<Complete>(a);
          rejected = rejected || std::holds_alternative<Reject>(a);
        }
        if (!rejected) down_log[m.to].push_back(d);
        apply(m.to, std::move(actions));
        break;
      }
    }
  }

  void apply(int node, std::vector<Action> actions) {
    for (auto& action : actions) {
      if (auto* up = std::get_if<SendUp>(&action)) {
        auto& most = max_up_chunk_count[up->chunk.epoch];
        most = std::max(most, up->chunk.count);
        send(Message::up, node, tree_.parent(node), std::move(up->chunk));
      } else if (auto* down = std::get_if<SendDown>(&action)) {
        down_chunk_count[down->chunk.epoch] = down->chunk.count;
        for (int child : down->children) send(Message::down, node, child, down->chunk);
      } else if (auto* done = std::get_if<Complete>(&action)) {
        REQUIRE(completed[node].count(done->epoch) == 0);
        completed[node][done->epoch] = test::owned(done->merged);
        if (done->epoch < o_.epochs) queue_ready(node, done->epoch + 1);
      } else {
        rejects.push_back(std::get<Reject>(action));
      }
    }
  }

  void send(Message::Kind kind, int from, int to, Chunk chunk) {
    Message m;
    m.kind = kind;
    m.from = from;
    m.to = to;
    m.epoch = chunk.epoch;
    m.chunk = std::move(chunk);
    queue_.push_back(std::move(m));
  }
};

}  // namespace lattice::fence::test
