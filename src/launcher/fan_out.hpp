// How a launch reaches its nodes. A star links to every node. A relayed launch (--launch tree)
// links to the head alone, which passes the request down the fence tree and every node's answer,
// reports and loss up, naming their node (agent/launch_relay.hpp); signals, stdin and aborts go
// to it once, for all. Once the head is lost the launch goes direct: the launcher links to every
// node still running, which ends its ranks and reports on that link.
//
// This class answers, from the mode and the tree alone, which link carries what goes to a node,
// which node a report on a link may be about, which nodes a request asks, and whether an abort
// or a signal still has to go out. Pure: the job makes the links and sends (job.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "fence/tree.hpp"
#include "policy/failure.hpp"

namespace lattice::launcher {

// Nodes from which `--launch auto` relays the launch down the fence tree.
inline constexpr int kLaunchTreeNodes = 16;

class FanOut {
 public:
  // `head`: the node of rank 0. `all_named`: every node id given in advance (local mode,
  // NAME=HOST:PORT); only then is a launch relayed, as the launcher proves none but the head's
  // itself. `launch`: --launch (auto, star or tree).
  FanOut(int nodes, int head, int fanout, bool all_named, std::string_view launch);

  bool relayed() const { return relayed_; }
  bool all_named() const { return all_named_; }
  int head() const { return head_; }
  // The fence tree every agent builds (launcher_file.hpp settled the fanout); null for one node.
  const fence::Tree* tree() const { return tree_ ? &*tree_ : nullptr; }

  // Whether the launcher links to `node` at the start: every node, or the relaying head alone.
  bool linked_first(int node) const { return !relayed_ || node == head_; }
  // The node whose link carries what goes to `node`: its own, or the head's while it relays.
  int link_of(int node) const { return relaying() ? head_ : node; }
  // Whether the link to `via` speaks for `node`: its own node, or a relayed launch's subtree
  // below it (the head's: every node). A request to `via` asks those nodes.
  bool speaks_for(int via, int node) const;
  // The node a report on the link to `via` is about (the node index it names), or nullopt.
  std::optional<int> origin(int via, uint32_t claimed) const;
  // A relay's answer on `via` for a node below it (NodeAnswer); a star's agents answer only the
  // requests they were sent.
  std::optional<int> answered_for(int via, uint32_t claimed) const {
    return relayed_ ? origin(via, claimed) : std::nullopt;
  }
  // Whether an error in answer to a node's request means it started nothing: an agent's refusal,
  // or on a relayed launch any answer but a loss (a relay's NodeAnswer carries only its text).
  bool started_nothing(ErrorKind kind) const { return kind == ErrorKind::refused || relayed_; }
  // The nodes below `top` in index order, which its refusal, or its loss before it answered,
  // left never asked: on a star, none.
  std::vector<int> below(int top) const;
  // Whether the link to `node` carries every node's reports (the relaying head's), not only its
  // own node's.
  bool carries_all(int node) const { return relaying() && node == head_; }

  // The relaying head is lost: from now on every node is reached directly, and told `abort`.
  void go_direct(policy::Failure abort);
  // What a node reached directly is told; null until the launch went direct.
  const policy::Failure* direct_abort() const { return direct_ ? &direct_abort_ : nullptr; }

  // What becomes of an abort the policy sends a node.
  enum class Abort {
    own_link,   // it goes out on the node's own link
    to_head,    // the first while the head relays: it goes to the head, which passes it on
    passed_on,  // the head passed one on already: nothing goes out
  };
  Abort abort();
  // Whether a signal the policy forwards to a node goes out: the relaying head passes each on to
  // every node, so it takes it once.
  bool signal_goes_out(int signum);

 private:
  bool relaying() const { return relayed_ && !direct_; }

  int nodes_;
  int head_;
  bool all_named_;
  bool relayed_;
  std::optional<fence::Tree> tree_;
  bool direct_ = false;
  policy::Failure direct_abort_;
  bool abort_sent_ = false;
  std::vector<int> signals_sent_;
};

}  // namespace lattice::launcher
