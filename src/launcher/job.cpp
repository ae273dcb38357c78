#include "launcher/job.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <utility>

#include "launcher/node_choice.hpp"
#include "launcher/spawn_plan.hpp"
#include "launcher/user_files.hpp"
#include "policy/launch_policy.hpp"
#include "secure/secret.hpp"
#include "wire/control.hpp"
#include "wire/failure_codec.hpp"
#include "wire/launch_signature.hpp"
#include "wire/spawn_codec.hpp"

namespace lattice::launcher {
namespace {

// An agent that neither connects nor answers LaunchProcesses within this is treated as
// unreachable (TCP's own SYN timeout is minutes).
constexpr uint64_t kAgentResponseMs = 15000;
// Ranks' output written to a slow reader and not taken yet, beyond which the agents' links are
// no longer read until it is: the launcher's memory stays bounded, whatever the ranks write.
constexpr size_t kUnwrittenOutputBytes = size_t{4} << 20;

// Like srun and mpiexec: ranks start in the launcher's working directory, or --chdir's (a
// relative one taken from there, as the user meant it).
// A spawn's hostfile: far more than any cluster's node list.
constexpr size_t kMaxHostfileBytes = 1 << 20;

std::string ranks_workdir(const std::string& chdir) {
  char cwd[4096];
  std::string here = ::getcwd(cwd, sizeof cwd) ? cwd : "";
  if (chdir.empty()) return here;
  if (chdir.front() == '/' || here.empty()) return chdir;
  return cat(here, '/', chdir);
}

// Every node's id was given in advance (local mode, NAME=HOST:PORT). Agents beyond the layout's
// nodes take no part.
bool all_named(const std::vector<AgentAddress>& agents, int nodes) {
  const auto used = std::min(agents.size(), static_cast<size_t>(nodes));
  return std::all_of(agents.begin(), agents.begin() + static_cast<ptrdiff_t>(used),
                     [](const AgentAddress& a) { return a.name_known; });
}

std::vector<AgentAddress> one_per_node(std::vector<AgentAddress> agents, int nodes) {
  agents.resize(static_cast<size_t>(nodes));
  return agents;
}

}  // namespace

std::string new_launch_id() {
  uint8_t b[16];
  secure::random_bytes(b, sizeof b);
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

Job::Job(net::Loop& loop, const Clock& clock, const LaunchOptions& options, AgentReach reach,
         Layout layout, std::vector<AgentAddress> agents, Request request,
         std::function<void()> done, CxiLease* cxi)
    : loop_(loop),
      clock_(clock),
      options_(options),
      layout_(std::move(layout)),
      request_(std::move(request)),
      done_(std::move(done)),
      fan_out_(layout_.nodes, layout_.head(), static_cast<int>(options.fanout),
               all_named(agents, layout_.nodes), options.launch),
      links_(loop, reach, one_per_node(std::move(agents), layout_.nodes), link_handlers()),
      nodes_(static_cast<size_t>(layout_.nodes)),
      line_starts_(static_cast<size_t>(layout_.ntasks), {true, true}),
      policy_(layout_.nodes, layout_.head(), options.kill_on_bad_exit),
      out_(loop, STDOUT_FILENO),
      err_(loop, STDERR_FILENO, &out_),
      outputs_(options.output, options.error, options.append_output, request_.launch_id,
               layout_.rank_nodes, request_.user, out_, err_),
      workdir_(ranks_workdir(options.chdir)),
      deadline_timer_(loop),
      ends_timer_(loop),
      start_ns_(clock.now_ns()),
      input_(loop, layout_.nodes, fan_out_, policy_, links_, request_.launch_id),
      cxi_(cxi),
      reach_(reach) {
  out_.on_reader_gone([this] { reader_gone("stdout"); });
  err_.on_reader_gone([this] { reader_gone("stderr"); });
  if (fan_out_.relayed()) {
    request_.relayed = true;
    // Through the user door the head knows this launcher by its uid, as the kernel told it.
    request_.launcher_name =
        reach.credentials ? launcher_name(reach.credentials) : std::to_string(::getuid());
  }
}

Job::~Job() = default;

AgentLinks::Handlers Job::link_handlers() {
  AgentLinks::Handlers h;
  // A node the launch gave up on: its link is dropped unused.
  h.wanted = [this](int node) { return !policy_.done(node); };
  h.carrying = [this](int node) { return carrying(node); };
  h.authenticated = [this](int node) { authenticated(node); };
  h.message = [this](int via, schema::Envelope::Reader envelope) { on_message(via, envelope); };
  h.out = [this](int node, JobFailure failure) { node_out(node, std::move(failure)); };
  h.lost = [this](int node, JobFailure failure) { link_lost(node, std::move(failure)); };
  return h;
}

double Job::now_ms() const { return static_cast<double>(clock_.now_ns() - start_ns_) / 1e6; }

void Job::start(double resolve_ms) {
  resolve_ms_ = resolve_ms;
  // Node ids known in advance: the credentials are asked for first, and come while the links
  // come up.
  if (fan_out_.all_named()) provision_cxi();
  std::vector<int> first;
  for (int node = 0; node < layout_.nodes; ++node)
    if (fan_out_.linked_first(node)) first.push_back(node);
  links_.link_to(first);
  deadline_timer_.start(kAgentResponseMs, 0, [this] {
    for (int node = 0; node < layout_.nodes; ++node)
      if (!policy_.done(node) && !policy_.live(node)) {
        const AgentAddress& a = links_.address(node);
        node_out(node, JobFailure{cat("agent ", a.node_id, " at ", a.host, ':', a.port,
                                      " did not answer within ", kAgentResponseMs / 1000, " s")});
      }
  });
}

void Job::authenticated(int node) {
  // Reached directly once the head was lost: it adopts this link and ends its part.
  if (const JobFailure* abort = fan_out_.direct_abort())
    return links_.notify(node, wire::abort_message(request_.launch_id, *abort));
  // Every first link is in (a relayed launch's one, to the head, is this).
  bool all_in = true;
  for (int n = 0; n < layout_.nodes; ++n)
    all_in = all_in && (!fan_out_.linked_first(n) || links_.authenticated(n) || policy_.done(n));
  if (all_in) connected_ms_ = now_ms();
  // (An abort before this point has already taken every node not yet asked out of the launch.)
  // With every node id known in advance (local mode, NAME=HOST:PORT) each agent gets its
  // request as soon as it has proved who it is, so fan-out overlaps the handshakes; otherwise
  // the ids come from the handshakes, and every request waits for the last one.
  if (fan_out_.all_named()) return send_launch(node);
  if (!all_in) return;
  // Node ids name the launch's members to each other: two agents claiming one would be
  // indistinguishable to the fence and the abort rules.
  for (int i = 0; i < layout_.nodes; ++i)
    for (int j = 0; j < i; ++j)
      if (id(i) == id(j)) {
        const AgentAddress &a = links_.address(j), &b = links_.address(i);
        return node_out(i, JobFailure{cat("agents at ", a.host, ':', a.port, " and ", b.host, ':',
                                          b.port, " both call themselves '", b.node_id, "'")});
      }
  provision_cxi();
  for (int n = 0; n < layout_.nodes; ++n) send_launch(n);
}

void Job::provision_cxi() {
  if (!cxi_) return;
  std::vector<std::string> ids;
  for (int node = 0; node < layout_.nodes; ++node) ids.push_back(id(node));
  cxi_->provision(options_.alloc.empty() ? request_.launch_id : options_.alloc, std::move(ids),
                  [this](Status ready) {
                    if (!ready) return run(policy_.failed(JobFailure{ready.error().message}));
                    for (int node = 0; node < layout_.nodes; ++node)
                      if (std::exchange(at(node).waiting_for_cxi, false)) send_launch(node);
                  });
}

void Job::send_launch(int node) {
  if (policy_.done(node)) return;  // dropped: the launch is being aborted
  if (cxi_ && !cxi_->credentials()) {
    at(node).waiting_for_cxi = true;
    return;
  }
  // Built at the first request: every node id is final by then (proved, or named in advance).
  if (!launch_request_) {
    std::vector<wire::PeerInfo> peers;
    for (int n = 0; n < layout_.nodes; ++n) {
      const AgentAddress& a = links_.address(n);
      peers.push_back(wire::PeerInfo{a.node_id, a.host, static_cast<uint16_t>(a.port)});
    }
    launch_request_ = launch_request(options_, request_, layout_, peers, workdir_,
                                     cxi_ ? cxi_->credentials() : nullptr);
  }
  launch_request_->node_index = static_cast<uint32_t>(node);
  auto msg = wire::launch_request(*launch_request_);
  // A certified launcher signs what the relays pass on, for nodes that require it.
  const secure::OwnIdentity* own = reach_.credentials ? reach_.credentials->own() : nullptr;
  if (request_.relayed && own) {
    auto signed_ = wire::sign_launch(msg.body().getLaunchProcesses(), *own,
                                     static_cast<uint64_t>(::time(nullptr)));
    if (!signed_)
      say(cat("lattice: warning: this relayed launch is not signed: ", signed_.error().message,
              "; nodes with certified identities take it only inside an allocation\n"));
  }
  // A request asks the nodes its link speaks for: on a relayed launch, the head's asks them all.
  for (int asked = 0; asked < layout_.nodes; ++asked) {
    if (!fan_out_.speaks_for(node, asked)) continue;
    at(asked).sent_ms = now_ms();
    run(policy_.sent(asked));
  }
  links_.call(node, std::move(msg), loop_.now_ms() + kAgentResponseMs,
              [this, node](Result<schema::Envelope::Reader> reply) {
                if (!reply) return answered(node, reply.error(), false);
                answered(node, wire::decode_accepted(reply->getBody().getLaunchAccepted()), false);
              });
}

void Job::answered(int node, Result<wire::Accepted> reply, bool lost) {
  if (policy_.done(node)) return;
  if (!reply) {
    const bool unanswered = !policy_.live(node);
    if (lost) {
      node_out(node, JobFailure{cat("node ", id(node), " lost: ", reply.error().message)});
    } else {
      node_out(node,
               JobFailure{cat("agent ", id(node), " refused the launch: ", reply.error().message)},
               fan_out_.started_nothing(reply.error().kind) ? policy::JobPolicy::Out::refused
                                                            : policy::JobPolicy::Out::lost);
    }
    // Nothing below a node that refused, or was lost unanswered, was asked.
    if (!lost || unanswered)
      for (int below : fan_out_.below(node))
        if (!policy_.done(below))
          node_out(below,
                   JobFailure{cat("node ", id(below), " was not asked: node ", id(node),
                                  " did not pass the request on")},
                   policy::JobPolicy::Out::not_asked);
    return;
  }
  Node& n = at(node);
  n.accepted_ms = now_ms();
  n.replied_ms = static_cast<double>(reply->replied_us) / 1e3;
  input_.accepted(node, reply->stdin_taken);
  std::vector<std::string> left_out;
  for (auto& name : reply->env_left_out)
    if (env_left_out_.insert(name).second) left_out.push_back(std::move(name));
  if (!left_out.empty() && label_.empty())  // a spawned launch's parent said it
    say(cat("lattice: hooks left out of the root job's environment (the agents' ",
            "security.allow_root_job_env may allow them): ", join(left_out, ", "), '\n'));
  // As srun where nothing enforces memory: the launch runs, and the user hears so.
  if (!reply->unenforced.empty())
    say(cat("lattice: warning: ", id(node), ": ", reply->unenforced, '\n'));
  if (options_.verbose)
    for (const auto& binding : reply->bindings) {
      auto colon = binding.find(':');
      say(cat("lattice: rank ", binding.substr(0, colon), " on ", id(node), " bound to CPUs ",
              binding.substr(colon + 1), "\n"));
    }
  run(policy_.accepted(node));
  if (++accepted_ == nodes_.size()) {
    start_input();
    started({});
  }
}

void Job::started(Status status) {
  if (!started_) return;
  auto said = std::move(started_);
  started_ = nullptr;
  said(std::move(status));
}

void Job::as_spawned(std::string label, std::vector<int> family_nodes,
                     std::function<void(Status)> started) {
  label_ = std::move(label);
  family_nodes_ = std::move(family_nodes);
  started_ = std::move(started);
}

int Job::family_node(int node) const {
  return family_nodes_.empty() ? node : family_nodes_[static_cast<size_t>(node)];
}

void Job::spawn(int via, uint64_t request_id, Result<wire::SpawnRequest> request) {
  auto answer = [this, via, request_id](const Result<wire::SpawnedLaunch>& child) {
    if (child)
      links_.respond(via, request_id, wire::spawn_answer(child.value()));
    else
      links_.respond_error(via, request_id, child.error().message);
  };
  if (!request) return answer(request.error());
  // The head speaks for the launch; no other node's link carries a spawn to us.
  if (request->launch_id != request_.launch_id || via != fan_out_.head())
    return answer(make_error("a spawn for another launch, or not from its head"));
  if (policy_.failure() || finished_) return answer(make_error("the launch is ending"));
  if (auto read = read_hostfiles(*request); !read) return answer(read.error());
  std::vector<std::string> ids;
  for (int node = 0; node < layout_.nodes; ++node) ids.push_back(id(node));
  auto plan = spawn_plan(options_, ids, *request);
  if (!plan) return answer(plan.error());
  Request child_request = request_;
  child_request.launch_id = new_launch_id();
  // Every generation's names and collectives are the first launch's, at its head.
  child_request.spawned_by = wire::SpawnParent{
      request_.launch_id, request->rank,
      request_.spawned_by ? request_.spawned_by->family_id() : request_.launch_id};
  std::vector<AgentAddress> agents;
  std::vector<int> family_nodes;
  for (int node : plan->nodes) {
    agents.push_back(links_.address(node));
    family_nodes.push_back(family_node(node));
  }
  // The family's first launch tells its nodes where each child runs (PmixFamily), by its own
  // node indices.
  wire::SpawnedLaunch spawned{child_request.launch_id, {}};
  for (int node : plan->layout.rank_nodes)
    spawned.rank_nodes.push_back(static_cast<uint32_t>(family_nodes[static_cast<size_t>(node)]));
  const size_t index = children_.size();
  Child child;
  child.options = std::make_unique<LaunchOptions>(std::move(plan->options));
  child.job =
      std::make_unique<Job>(loop_, clock_, *child.options, reach_, std::move(plan->layout),
                            std::move(agents), child_request, [this, index] { child_done(index); });
  child.job->as_spawned(
      cat(label_, index + 1, "."), std::move(family_nodes),
      [answer, spawned = std::move(spawned)](Status s) {
        answer(s ? Result<wire::SpawnedLaunch>(spawned) : Result<wire::SpawnedLaunch>(s.error()));
      });
  children_.push_back(std::move(child));
  children_.back().job->start();
}

Status Job::read_hostfiles(wire::SpawnRequest& request) const {
  // Relative to where the spawning rank asked from (Open MPI sends its cwd as PMIX_WDIR).
  const std::string& base = request.workdir.empty() ? workdir_ : request.workdir;
  for (const auto& file : request.hostfiles) {
    std::string path = file.front() == '/' ? file : cat(base, '/', file);
    auto text = read_user_file(path, request_.user, kMaxHostfileBytes);
    if (!text) return make_error(cat("hostfile: ", text.error().message));
    auto list = hostfile_nodelist(*text, cat("hostfile ", path));
    if (!list) return list.error();
    for (auto& host : split(*list, ','))
      if (std::find(request.hosts.begin(), request.hosts.end(), host) == request.hosts.end())
        request.hosts.push_back(std::move(host));
  }
  return {};
}

void Job::child_done(size_t index) {
  Child& child = children_[index];
  child.done = true;
  std::string report = child.job->final_report();
  if (!report.empty()) say(cat("lattice: spawned launch ", label_, index + 1, ":\n", report));
  // A spawned launch that failed fails its parent, as under mpirun.
  if (child.job->exit_code() != 0 && !policy_.failure() && !finished_)
    end_now(cat("spawned launch ", label_, index + 1, " failed"));
  if (finished_) finish();
}

void Job::end_now(const std::string& why) { run(policy_.failed(JobFailure{why})); }

void Job::link_lost(int node, JobFailure failure) {
  if (!policy_.done(node)) node_out(node, failure);
  if (fan_out_.carries_all(node)) go_direct(failure);
}

void Job::go_direct(const JobFailure& why) {
  fan_out_.go_direct(policy_.failure() ? *policy_.failure() : why);
  std::vector<int> targets;
  for (int node = 0; node < layout_.nodes; ++node)
    if (!policy_.done(node) && !links_.linked(node)) targets.push_back(node);
  if (targets.empty()) return;
  say(cat("lattice: the head agent is lost; reaching the other ", targets.size(),
          " nodes directly to end their ranks\n"));
  links_.link_to(targets);
  deadline_timer_.start(kAgentResponseMs, 0, [this, head = id(fan_out_.head())] {
    for (int node = 0; node < layout_.nodes; ++node)
      if (!policy_.done(node) && !links_.authenticated(node))
        node_out(node, JobFailure{cat("node ", id(node),
                                      " is out of reach: its reports came through node ", head,
                                      ", which was lost, and it did not answer directly within ",
                                      kAgentResponseMs / 1000, " s")});
  });
}

bool Job::carrying(int node) const {
  return fan_out_.carries_all(node) ? !policy_.finished() : policy_.live(node);
}

void Job::start_input() {
  if (options_.input_rank == kInputNone || policy_.finished()) return;
  std::vector<int> nodes;
  if (options_.input_rank == kInputAll)
    for (int node = 0; node < layout_.nodes; ++node) nodes.push_back(node);
  else
    nodes.push_back(layout_.rank_nodes[options_.input_rank]);
  if (auto started = input_.start(std::move(nodes)); !started)
    say(cat("lattice: ", started.error().message, "; the ranks get no input\n"));
}

void Job::on_message(int via, schema::Envelope::Reader envelope) {
  auto body = envelope.getBody();
  switch (body.which()) {
    case schema::Envelope::Body::OUTPUT: {
      auto chunk = wire::decode_output(body.getOutput());
      if (options_.label && chunk.rank >= 0 && chunk.rank < layout_.ntasks) {
        auto& streams = line_starts_[static_cast<size_t>(chunk.rank)];
        chunk.data = label_lines(label_, chunk.rank, chunk.data, streams[chunk.is_stderr ? 1 : 0]);
      }
      outputs_.write(chunk.rank, chunk.is_stderr, chunk.data);
      return maybe_pause_output();
    }
    case schema::Envelope::Body::RANK_EXIT: {
      auto exit = wire::decode_rank_exit(body.getRankExit());
      // A rank of the node it names, which the link speaks for.
      if (exit.rank < 0 || exit.rank >= static_cast<int>(layout_.rank_nodes.size()) ||
          layout_.rank_nodes[static_cast<size_t>(exit.rank)] != exit.node_index ||
          !fan_out_.origin(via, static_cast<uint32_t>(exit.node_index)))
        return;
      // Maybe twice, alike: a failing relayed launch's nodes report by two ways.
      ranks_[exit.rank] = RankResult{exit.node_index, exit.status.code, exit.status.signal,
                                     exit.status.out_of_memory, exit.status.memory_limit};
      return;
    }
    case schema::Envelope::Body::STDIN_TAKEN: {
      auto taken = wire::decode_stdin_taken(body.getStdinTaken());
      if (auto node = fan_out_.origin(via, static_cast<uint32_t>(taken.node_index)))
        input_.taken(*node, taken.bytes);
      return;
    }
    case schema::Envelope::Body::LAUNCH_ENDED: {
      auto end = wire::decode_launch_ended(body.getLaunchEnded());
      auto node = fan_out_.origin(via, static_cast<uint32_t>(end.node_index));
      if (!node || policy_.has_ended(*node)) return;
      at(*node).times = std::move(end.times);
      at(*node).strays = end.strays;
      for (auto& s : end.stragglers)
        stragglers_.push_back(Straggler{s.rank, id(*node), std::move(s.pmi_state),
                                        std::move(s.last_command), s.idle_ms});
      const bool head_told = !end.failure || policy::told_head(*end.failure, id(layout_.head()));
      run(policy_.ended(*node, std::move(end.failure), head_told));
      return input_.pace();  // it takes no more input
    }
    case schema::Envelope::Body::PMIX_SPAWN:
      if (envelope.getRequestId() == 0) return;
      return spawn(via, envelope.getRequestId(), wire::decode_spawn(body.getPmixSpawn()));
    case schema::Envelope::Body::NODE_ANSWER: {
      auto answer = wire::decode_node_answer(body.getNodeAnswer());
      auto node = fan_out_.answered_for(via, static_cast<uint32_t>(answer.node_index));
      if (!node) return;
      if (answer.error.empty()) return answered(*node, std::move(answer.accepted), false);
      return answered(*node, make_error(answer.error), answer.lost);
    }
    default:
      return;
  }
}

void Job::node_out(int node, JobFailure failure, policy::JobPolicy::Out how) {
  run(policy_.node_out(node, std::move(failure), how));
  input_.pace();  // it takes no more input
}

void Job::run(std::vector<policy::JobAction> actions) {
  for (auto& action : actions) {
    // A relayed launch's head passes an abort or a signal to every node: it is sent once.
    if (auto* to_abort = std::get_if<policy::AbortNode>(&action)) {
      const FanOut::Abort how = fan_out_.abort();
      if (how == FanOut::Abort::passed_on) continue;
      if (how == FanOut::Abort::to_head) await_ends();
      links_.notify(fan_out_.link_of(to_abort->node),
                    wire::abort_message(request_.launch_id, to_abort->failure));
    } else if (auto* to_signal = std::get_if<policy::SignalNode>(&action)) {
      if (!fan_out_.signal_goes_out(to_signal->signum)) continue;
      links_.notify(fan_out_.link_of(to_signal->node),
                    wire::signal({request_.launch_id, to_signal->signum}));
    } else if (auto* drop = std::get_if<policy::DropNode>(&action)) {
      links_.close(drop->node);
    } else if (std::holds_alternative<policy::Finish>(action)) {
      finish();
    }
  }
}

void Job::await_ends() {
  ends_timer_.start(kAgentResponseMs, 0, [this] {
    if (links_.paused()) return await_ends();  // ends may wait behind output nobody reads
    for (int node = 0; node < layout_.nodes; ++node)
      if (!policy_.done(node))
        node_out(node, JobFailure{cat("node ", id(node), " lost: its end did not come ",
                                      "up the tree within ", kAgentResponseMs / 1000,
                                      " s of the abort (the way up from it was lost)")});
  });
}

void Job::signal(int signum) {
  if (policy_.finished()) return;
  // Still waiting for the fabric manager: nothing runs yet, so nothing to forward to.
  if (cxi_ && !cxi_->credentials())
    return run(policy_.failed(JobFailure{
        cat("interrupted by signal ", signum, " before the launch started"), 128 + signum}));
  auto actions = policy_.signal(signum);
  if (signum == SIGINT && !policy_.aborting())
    say("lattice: forwarding SIGINT to every rank (Ctrl-C again to kill them)\n");
  run(std::move(actions));
}

void Job::maybe_pause_output() {
  if (links_.paused() || out_.queued_bytes() + err_.queued_bytes() <= kUnwrittenOutputBytes) return;
  links_.pause();
  when_written([this] { links_.resume(); });
}

void Job::reader_gone(const char* stream) {
  if (reader_gone_ || policy_.finished()) return;
  reader_gone_ = true;
  // Whatever waited for that reader to drain goes on (a failed stream lets its waiters go): paused
  // links are read again, so the nodes' ends come.
  run(policy_.failed(
      JobFailure{cat("the reader of the launcher's ", stream, " went away"), 128 + SIGPIPE}));
}

void Job::when_written(std::function<void()> fn) {
  out_.when_drained([this, fn = std::move(fn)]() mutable { err_.when_drained(std::move(fn)); });
}

void Job::finish() {
  finished_ = true;
  started(make_error(policy_.failure() ? policy::describe(*policy_.failure())
                                       : std::string("it ended before every node accepted it")));
  // Its end waits for its spawned launches': as under mpirun, children may outlive their
  // parents' ranks, not a failed launch.
  bool waiting = false;
  for (auto& child : children_)
    if (!child.done) {
      if (policy_.failure()) child.job->end_now("the launch that spawned it failed");
      waiting = true;
    }
  if (waiting) return;
  input_.stop();
  deadline_timer_.stop();
  ends_timer_.stop();
  links_.close_all();
  // The ranks' last output goes out before the launcher's report does.
  when_written([this] { done_(); });
}

}  // namespace lattice::launcher
