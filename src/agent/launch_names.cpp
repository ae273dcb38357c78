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
      timer_(loop),
      deadline_(loop) {}

LaunchNames::~LaunchNames() {
  // Other nodes' waiting lookups are rpc calls: their answer is an error now, not their timeout.
  for (auto& answer : names_.drop_waiters(cat("launch ", spec_.launch_id, " has ended")))
    if (auto it = waiting_.find(answer.id); it != waiting_.end()) it->second(answer.result);
}

void LaunchNames::request(pmi::NameOp op, const std::string& name, const std::string& port,
                          Answer answer) {
  request(wire::NameRequest{spec_.launch_id, op, name, port}, std::move(answer));
}

void LaunchNames::request(wire::NameRequest request, Answer answer) {
  if (spec_.spawned_by) return to_parent(std::move(request), std::move(answer));
  request.launch_id = spec_.launch_id;
  request.wait_ms = std::min(request.wait_ms, spec_.fence_timeout_ms);
  if (spec_.head_node == spec_.node_index)
    return asked(spec_.node_index, request, std::move(answer));
  peers_.call(spec_.peers[static_cast<size_t>(spec_.head_node)], wire::name_request(request),
              request.wait_ms + spec_.fence_timeout_ms,
              [alive = std::weak_ptr<int>(alive_), done = std::move(answer)](auto reply) {
                if (!alive.expired()) done(wire::decode_name_answer(reply));
              });
}

// The parent runs on every node its children do; if it has ended here, so has the connection.
void LaunchNames::to_parent(wire::NameRequest request, Answer answer) {
  LaunchNames* parent = parents_ ? parents_->names_of(spec_.spawned_by->launch_id) : nullptr;
  if (!parent) {
    ready_.emplace_back(std::move(answer), make_error(cat("launch ", spec_.spawned_by->launch_id,
                                                          ", which spawned this one, has ended")));
    return deliver({});
  }
  parent->request(std::move(request), [alive = std::weak_ptr<int>(alive_),
                                       done = std::move(answer)](const Result<std::string>& r) {
    if (!alive.expired()) done(r);
  });
}

void LaunchNames::asked(int from, const wire::NameRequest& request, Answer answer) {
  NameAsk ask;
  ask.op = request.op;
  ask.name = request.name;
  ask.value = request.port;
  ask.node = from;
  NameRegistry::Id id = ++next_id_;
  waiting_.emplace(id, std::move(answer));
  if (request.pmix) {
    // The asking proc must run on the asking node: a node speaks for its own ranks only.
    auto nodes = nodes_of_(request.nspace, request.rank);
    if (!nodes || request.rank < 0 || !nodes->count(from))
      return deliver({{id, make_error(cat("a PMIx name request for rank ", request.rank, " of '",
                                          request.nspace, "' from node ", from,
                                          ", which does not host it"))}});
    if (request.scope > static_cast<uint8_t>(NameScope::proc))
      return deliver({{id, make_error("a PMIx name request of an unknown scope")}});
    ask.pmix = true;
    ask.nspace = request.nspace;
    ask.rank = request.rank;
    ask.scope = static_cast<NameScope>(request.scope);
    ask.first_read = request.first_read;
    if (request.wait_ms > 0)
      ask.deadline_ms = loop_.now_ms() + std::min(request.wait_ms, spec_.fence_timeout_ms);
  }
  deliver(names_.ask(id, ask, loop_.now_ms()));
  arm_deadline();
}

void LaunchNames::deliver(std::vector<NameRegistry::Answer> answers) {
  for (auto& answer : answers) {
    auto it = waiting_.find(answer.id);
    if (it == waiting_.end()) continue;
    ready_.emplace_back(std::move(it->second), std::move(answer.result));
    waiting_.erase(it);
  }
  if (ready_.empty() || timer_.active()) return;
  timer_.start(0, 0, [this] {
    auto ready = std::move(ready_);
    ready_.clear();
    for (auto& [done, result] : ready) done(result);
  });
}

void LaunchNames::arm_deadline() {
  auto next = names_.next_deadline();
  if (!next) return deadline_.stop();
  uint64_t now = loop_.now_ms();
  deadline_.start(*next > now ? *next - now : 0, 0, [this] {
    deliver(names_.expire(loop_.now_ms()));
    arm_deadline();
  });
}

}  // namespace lattice::agent
