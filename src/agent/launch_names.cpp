#include "agent/launch_names.hpp"

namespace lattice::agent {

LaunchNames::LaunchNames(net::Loop& loop, const LaunchSpec& spec, NodeLinks& peers)
    : spec_(spec), peers_(peers), timer_(loop) {}

void LaunchNames::request(pmi::NameOp op, const std::string& name, const std::string& port,
                          Answer answer) {
  if (spec_.head_node != spec_.node_index) {
    peers_.call(spec_.peers[static_cast<size_t>(spec_.head_node)],
                wire::name_request({spec_.launch_id, op, name, port}), spec_.fence_timeout_ms,
                [alive = std::weak_ptr<int>(alive_), done = std::move(answer)](auto reply) {
                  if (!alive.expired()) done(wire::decode_name_answer(reply));
                });
    return;
  }
  ready_.emplace_back(std::move(answer), names_.apply(op, name, port));
  timer_.start(0, 0, [this] {
    auto ready = std::move(ready_);
    ready_.clear();
    for (auto& [done, result] : ready) done(result);
  });
}

}  // namespace lattice::agent
