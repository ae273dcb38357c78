// What a launch says when it ends: its exit code, and the report on stderr (the failure,
// stragglers, strays, every rank's status when it failed, -v's timings with the agents' clocks
// placed by the fences).
#include "config/config.hpp"
#include "launcher/fence_clocks.hpp"
#include "launcher/job.hpp"

namespace lattice::launcher {

std::vector<std::optional<double>> Job::agent_clock_origins() const {
  std::vector<std::optional<double>> origins;
  std::vector<std::vector<lattice::wire::FenceTimes>> fences;
  for (int i = 0; i < layout_.nodes; ++i) {
    const Node& node = nodes_[static_cast<size_t>(i)];
    origins.push_back(!policy_.asked(i) ? std::nullopt
                                        : std::optional<double>(agent_clock_origin_ms(
                                              node.sent_ms, node.accepted_ms, node.replied_ms)));
    fences.push_back(node.times.fences);
  }
  const fence::Tree* tree = fan_out_.tree();
  return tree ? align_by_fences(*tree, std::move(origins), fences) : origins;
}

int Job::exit_code() const { return job_exit_code(policy_.failure(), ranks_, layout_.ntasks); }

std::string Job::final_report() const {
  std::string out;
  int code = exit_code();
  // Quiet, as a command killed by SIGPIPE: the status (141) says it.
  if (reader_gone_ && !options_.verbose) return out;
  if (policy_.failure())
    out += cat("lattice: job failed: ", policy::describe(*policy_.failure()), '\n');
  out += format_stragglers(stragglers_);
  for (int i = 0; i < layout_.nodes; ++i)
    if (const Node& node = nodes_[static_cast<size_t>(i)]; node.strays > 0 && !options_.quiet)
      out +=
          cat("lattice: ", id(i), ": ", node.strays, node.strays == 1 ? " process" : " processes",
              " the launch left behind (started in a session of its own, or double-forked) ",
              node.strays == 1 ? "was" : "were", " killed\n");
  if (code != 0) {
    std::vector<bool> settled;
    for (int i = 0; i < layout_.nodes; ++i) settled.push_back(policy_.settled(i));
    out +=
        cat("lattice: exit statuses: ", summarize_exits(ranks_, layout_.rank_nodes, settled), '\n');
  }
  if (options_.verbose) {
    Timings t;
    t.resolve = resolve_ms_;
    t.connect = connected_ms_;
    if (cxi_) t.credentials = cxi_->provision_ms();
    double accepted = -1, user = -1, spawned = -1, first_init = -1, last_fin = -1, exited = -1;
    std::vector<NodeFence> fences;
    const std::vector<std::optional<double>> origins = agent_clock_origins();
    for (int i = 0; i < layout_.nodes; ++i) {
      if (!policy_.asked(i)) continue;
      const Node& node = nodes_[static_cast<size_t>(i)];
      accepted = std::max(accepted, node.accepted_ms);
      t.sent = std::max(t.sent, node.sent_ms);
      // Agent times count from the request's arrival; -1: never reached.
      const double base = *origins[static_cast<size_t>(i)];
      auto at = [&](uint64_t us) { return us ? base + static_cast<double>(us) / 1e3 : -1.0; };
      const lattice::wire::NodeTimes& nt = node.times;
      user = std::max(user, at(nt.user_known_us));
      spawned = std::max(spawned, at(nt.spawned_us));
      if (nt.first_init_us)
        first_init =
            first_init < 0 ? at(nt.first_init_us) : std::min(first_init, at(nt.first_init_us));
      last_fin = std::max(last_fin, at(nt.last_finalize_us));
      exited = std::max(exited, at(nt.exited_us));
      for (const auto& f : nt.fences)
        fences.push_back(NodeFence{f.epoch, id(i), at(f.entered_us), at(f.reduced_us),
                                   at(f.store_us), at(f.released_us)});
    }
    t.fan_out = accepted;
    t.user_lookup = user;
    t.spawn = spawned;
    t.first_init = first_init;
    t.last_finalize = last_fin;
    t.exit = exited;
    t.total = now_ms();
    out += format_timings(t);
    out += format_fence_phases(fences);
    const rpc::MessageCounts& counts = links_.counts();
    out += cat("lattice: messages to and from agents: ", counts.sent, " sent, ", counts.received,
               " received\n");
  }
  return out;
}

}  // namespace lattice::launcher
