#include "launcher/allocation_run.hpp"

#include <cstdio>

#include "base/strings.hpp"

namespace lattice::launcher {
namespace {

// How long the agents get to accept the allocation, and to confirm its end.
constexpr uint64_t kAgentAnswerMs = 15000;
// Beyond the agents' grace for what is left in it (agent/allocation.hpp).
constexpr uint64_t kEndConfirmMs = 10000;
constexpr int kTimeLimitStatus = 124;  // as `lattice launch -t`, srun and timeout(1)

}  // namespace

AllocationRun::AllocationRun(net::Loop& loop, const Clock& clock,
                             const secure::Credentials& credentials,
                             std::vector<AgentAddress> agents, Plan plan, CxiLease* cxi,
                             std::function<void()> done)
    : loop_(loop),
      clock_(clock),
      credentials_(credentials),
      plan_(std::move(plan)),
      cxi_(cxi),
      done_(std::move(done)),
      links_(loop, AgentReach{&credentials, ""}, agents, link_handlers()),
      started_(agents.size(), false),
      ended_(agents.size(), false),
      start_ns_(clock.now_ns()),
      end_timer_(loop) {}

AllocationRun::~AllocationRun() = default;

AgentLinks::Handlers AllocationRun::link_handlers() {
  AgentLinks::Handlers h;
  h.wanted = [this](int) { return stage_ != Stage::done; };
  h.carrying = [this](int node) { return !ended_[static_cast<size_t>(node)]; };
  h.authenticated = [this](int) { authenticated(); };
  h.message = [this](int node, schema::Envelope::Reader envelope) {
    if (envelope.getBody().which() == schema::Envelope::Body::ALLOCATION_ENDED)
      node_ended(node, wire::decode_allocation_ended(envelope.getBody().getAllocationEnded()));
  };
  h.out = [this](int node, JobFailure failure) { node_lost(node, failure.detail); };
  h.lost = [this](int node, JobFailure failure) { node_lost(node, failure.detail); };
  return h;
}

void AllocationRun::start() {
  std::vector<int> all;
  for (int node = 0; node < nodes(); ++node) all.push_back(node);
  links_.link_to(all);
}

void AllocationRun::authenticated() {
  if (++authenticated_ < nodes() || stage_ != Stage::linking) return;
  stage_ = Stage::starting;
  if (!cxi_) return send_starts();
  std::vector<std::string> ids;
  for (int node = 0; node < nodes(); ++node) ids.push_back(id(node));
  cxi_->provision(plan_.spec.id, std::move(ids), [this](Status provisioned) {
    if (!provisioned) return end_everywhere(provisioned.error().message, true);
    send_starts();
  });
}

void AllocationRun::send_starts() {
  if (stage_ != Stage::starting) return;
  starts_sent_ = true;
  wire::AllocationSpec spec = plan_.spec;
  for (int node = 0; node < nodes(); ++node)
    spec.nodes.push_back(wire::PeerInfo{id(node), links_.address(node).host,
                                        static_cast<uint16_t>(links_.address(node).port)});
  if (cxi_ && cxi_->credentials()) {
    const auto* c = cxi_->credentials();
    spec.cxi.emplace(
        wire::CxiKey{c->vni, c->svc_id,
                     std::shared_ptr<const secure::Secret>(std::shared_ptr<void>(), &c->auth_key)});
  }
  for (int node = 0; node < nodes(); ++node) {
    spec.node_index = static_cast<uint32_t>(node);
    links_.call(node, wire::allocation_start(spec), kAgentAnswerMs,
                [this, node](Result<schema::Envelope::Reader> reply) { started(node, reply); });
  }
}

void AllocationRun::started(int node, Result<schema::Envelope::Reader> reply) {
  ++answered_;
  if (reply) {
    started_[static_cast<size_t>(node)] = true;
  } else if (stage_ == Stage::starting) {
    end_everywhere(cat("node ", id(node), " refused it: ", reply.error().message), true);
  }
  if (stage_ == Stage::ending) ended_[static_cast<size_t>(node)] = !reply;
  if (answered_ < nodes()) return check_done();
  if (stage_ == Stage::ending) {
    // Those that accepted after the end was sent are told now.
    for (int n = 0; n < nodes(); ++n)
      if (started_[static_cast<size_t>(n)] && !ended_[static_cast<size_t>(n)])
        links_.notify(n, wire::allocation_end({plan_.spec.id, *end_reason_}));
    return check_done();
  }
  run_batch();
}

void AllocationRun::run_batch() {
  stage_ = Stage::running;
  if (plan_.verbose)
    say(cat("allocation ", plan_.spec.id, " started on ", nodes(), " nodes in ",
            static_cast<double>(clock_.now_ns() - start_ns_) / 1e6, " ms"));
  Layout layout{1, 1, {0}};
  batch_ = std::make_unique<Job>(loop_, clock_, plan_.batch, AgentReach{&credentials_, ""}, layout,
                                 std::vector<AgentAddress>{links_.address(0)},
                                 std::move(plan_.batch_request), [this] { batch_done(); });
  batch_->start();
}

void AllocationRun::batch_done() {
  batch_finished_ = true;
  exit_code_ = batch_->exit_code();
  end_everywhere("its batch step ended");
  check_done();
}

void AllocationRun::end_everywhere(const std::string& reason, bool failed) {
  if (stage_ == Stage::ending || stage_ == Stage::done) return;
  if (!end_reason_ && (failed || !batch_finished_)) end_reason_ = reason;
  told_reason_ = reason;
  if (failed) exit_code_ = 1;
  const bool starting = starts_sent_ && answered_ < nodes();  // answers still to come
  stage_ = Stage::ending;
  for (int node = 0; node < nodes(); ++node) {
    if (!started_[static_cast<size_t>(node)]) {
      if (!starting) ended_[static_cast<size_t>(node)] = true;  // never had it
      continue;
    }
    if (!ended_[static_cast<size_t>(node)])
      links_.notify(node, wire::allocation_end({plan_.spec.id, reason}));
  }
  end_timer_.start(kEndConfirmMs, 0, [this] {
    for (int node = 0; node < nodes(); ++node)
      if (!ended_[static_cast<size_t>(node)]) {
        say(cat("node ", id(node), " did not confirm the end of allocation ", plan_.spec.id,
                " within ", kEndConfirmMs / 1000, " s"));
        ended_[static_cast<size_t>(node)] = true;
      }
    batch_finished_ = true;
    check_done();
  });
  check_done();
}

void AllocationRun::node_ended(int node, const wire::AllocationEnded& ended) {
  if (ended.id != plan_.spec.id || ended_[static_cast<size_t>(node)]) return;
  ended_[static_cast<size_t>(node)] = true;
  if (ended.killed && plan_.verbose)
    say(cat("node ", id(node), ": ", ended.killed, " processes of the allocation were killed"));
  if (stage_ != Stage::ending) {
    time_limit_ = ended.time_limit;
    end_everywhere(cat(ended.reason, " (node ", id(node), ")"));
  } else if (!end_reason_ && exit_code_ != 0 && ended.reason != told_reason_) {
    // The node ended it on its own (its time limit, an operator) and ended its launches first:
    // the batch step's end, which that caused, got here before the node's word. A batch step
    // that ended well before is not blamed on the allocation's end.
    time_limit_ = ended.time_limit;
    end_reason_ = cat(ended.reason, " (node ", id(node), ")");
  }
  check_done();
}

void AllocationRun::node_lost(int node, const std::string& why) {
  if (ended_[static_cast<size_t>(node)] || stage_ == Stage::done) return;
  ended_[static_cast<size_t>(node)] = true;
  if (stage_ == Stage::linking || stage_ == Stage::starting) return end_everywhere(why, true);
  end_everywhere(why);
  check_done();
}

void AllocationRun::check_done() {
  if (stage_ != Stage::ending) return;
  for (int node = 0; node < nodes(); ++node)
    if (!ended_[static_cast<size_t>(node)]) return;
  if (batch_ && !batch_finished_) return;
  if (starts_sent_ && answered_ < nodes()) return;
  stage_ = Stage::done;
  end_timer_.stop();
  links_.close_all();
  if (cxi_)
    cxi_->release(done_);
  else
    done_();
}

void AllocationRun::signal(int signum) {
  if (batch_ && !batch_finished_) return batch_->signal(signum);
  exit_code_ = 128 + signum;
  end_everywhere(cat("interrupted by signal ", signum), true);
  exit_code_ = 128 + signum;
}

int AllocationRun::exit_code() const { return time_limit_ ? kTimeLimitStatus : exit_code_; }

std::string AllocationRun::final_report() const {
  std::string out = batch_ ? batch_->final_report() : std::string();
  if (end_reason_)
    out += cat("lattice alloc: allocation ", plan_.spec.id,
               batch_ ? " ended: " : " could not start: ", *end_reason_, '\n');
  return out;
}

void AllocationRun::say(const std::string& line) const {
  std::fprintf(stderr, "lattice alloc: %s\n", line.c_str());
}

}  // namespace lattice::launcher
