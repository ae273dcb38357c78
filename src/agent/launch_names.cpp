#include "agent/launch_names.hpp"

#include <algorithm>

#include "agent/pmix_procs.hpp"
#include "base/strings.hpp"

namespace lattice::agent {

LaunchNames::LaunchNames(net::Loop& loop, const LaunchSpec& spec, NodeLinks& peers,
                         ProcNodes nodes_of, ParentLaunches* parents)
    : loop_(loop),
      spec_(spec),
      peers_(peers),
      nodes_of_(std::move(nodes_of)),
      parents_(parents),
      waiters_(loop) {}

LaunchNames::~LaunchNames() {
  // Other nodes' waiting lookups are rpc calls: their answer is an error now, not their timeout.
  waiters_.deliver_now(names_.drop_waiters(cat("launch ", spec_.launch_id, " has ended")));
}

void LaunchNames::request(pmi::NameOp op, const std::string& name, const std::string& port,
                          Answer answer) {
  wire::NameRequest r;
  r.op = op;
  r.name = name;
  r.port = port;
  request(std::move(r), std::move(answer));
}

void LaunchNames::request(wire::NameRequest request, Answer answer) {
  if (spec_.spawned_by) return to_parent(std::move(request), std::move(answer));
  request.launch_id = spec_.launch_id;
  request.wait_ms = std::min(request.wait_ms, spec_.fence_timeout_ms);
  if (spec_.head_node == spec_.node_index)
    return asked(spec_.node_index, request, std::move(answer));
  peers_.call(spec_.peers[static_cast<size_t>(spec_.head_node)], wire::name_request(request),
              request.wait_ms + spec_.fence_timeout_ms,
              [done = waiters_.guarded(std::move(answer))](auto reply) {
                done(wire::decode_name_answer(reply));
              });
}

// The family's first launch runs on every node a spawned one does; if it has ended here, so has
// the connection.
void LaunchNames::to_parent(wire::NameRequest request, Answer answer) {
  const std::string& family = spec_.spawned_by->family_id();
  LaunchNames* parent = parents_ ? parents_->names_of(family) : nullptr;
  if (!parent) return waiters_.later(std::move(answer), parent_ended(family));
  parent->request(std::move(request), waiters_.guarded(std::move(answer)));
}

void LaunchNames::asked(int from, const wire::NameRequest& request, Answer answer) {
  NameAsk ask;
  ask.op = request.op;
  ask.name = request.name;
  ask.value = request.port;
  ask.node = from;
  NameRegistry::Id id = ++next_id_;
  waiters_.wait(id, std::move(answer));
  if (request.pmix) {
    // The asking proc must run on the asking node: a node speaks for its own ranks only.
    auto nodes = nodes_of_(request.nspace, request.rank);
    if (!nodes || request.rank < 0 || !nodes->count(from))
      return waiters_.deliver(std::vector<NameRegistry::Answer>{
          {id, make_error(cat("a PMIx name request for rank ", request.rank, " of '",
                              request.nspace, "' from node ", from, ", which does not host it"))}});
    if (request.scope > static_cast<uint8_t>(NameScope::proc))
      return waiters_.deliver(std::vector<NameRegistry::Answer>{
          {id, make_error("a PMIx name request of an unknown scope")}});
    ask.pmix = true;
    ask.nspace = request.nspace;
    ask.rank = request.rank;
    ask.scope = static_cast<NameScope>(request.scope);
    ask.first_read = request.first_read;
    if (request.wait_ms > 0)
      ask.deadline_ms = loop_.now_ms() + std::min(request.wait_ms, spec_.fence_timeout_ms);
  }
  waiters_.deliver(names_.ask(id, ask, loop_.now_ms()));
  arm_deadline();
}

void LaunchNames::arm_deadline() {
  waiters_.arm(names_.next_deadline(), [this] {
    waiters_.deliver(names_.expire(loop_.now_ms()));
    arm_deadline();
  });
}

}  // namespace lattice::agent
