#include "agent/rank_set.hpp"

#include <algorithm>

#include "agent/wire_up.hpp"
#include "base/log.hpp"

namespace lattice::agent {
namespace {

// The launcher's stdin held for input ranks not started yet: far beyond what arrives before a
// spawn that comes one loop turn after the launch request.
constexpr size_t kMaxPendingInputBytes = size_t{64} << 20;
// The launcher hears how much stdin the input ranks took each time this much more was taken:
// well under the launcher's window (launcher/stdin_feed.hpp), so it never waits for a report
// that is not due.
constexpr uint64_t kInputReportBytes = uint64_t{1} << 20;

}  // namespace

RankSet::RankSet(const LaunchSpec& spec, Events& events) : spec_(spec), events_(events) {
  auto local = spec.local_ranks();
  for (size_t i = 0; i < local.size(); ++i) {
    auto rank = std::make_unique<Rank>();
    rank->rank = local[i];
    rank->local_rank = static_cast<int>(i);
    rank->app = spec.app_of(local[i]);
    ranks_.push_back(std::move(rank));
  }
}

Status RankSet::assign(const NodeResources& node) {
  auto resources = rank_resources(spec_, ranks_.size(), node);
  if (!resources) return resources.error();
  for (size_t i = 0; i < ranks_.size(); ++i) {
    ranks_[i]->cpus = std::move((*resources)[i].cpus);
    ranks_[i]->gpu_env = std::move((*resources)[i].gpu_env);
  }
  return {};
}

Status RankSet::start(net::Loop& loop, Rank& rank, net::SpawnSpec& spawn) {
  spawn.stdin_pipe = spec_.gets_input(rank.rank);
  Rank* r = &rank;
  auto process = net::Process::spawn(
      loop, spawn, [this, r](net::ExitInfo info) { events_.rank_exited(r->rank, r->pid, info); });
  if (!process) return process.error();
  rank.process = std::move(process.value());
  rank.pid = rank.process->pid();
  if ((rank.in_stream = rank.process->take_stdin())) {
    rank.in_stream->set_write_limit(kRankWriteLimitBytes);
    feed_input(rank);
  }
  attach_output(rank, rank.process->take_stdout(), false);
  attach_output(rank, rank.process->take_stderr(), true);
  return {};
}

void RankSet::starting_done() {
  starting_ = false;
  report_input_taken();
}

bool RankSet::any_running() const { return running() > 0; }

size_t RankSet::running() const {
  return static_cast<size_t>(std::count_if(
      ranks_.begin(), ranks_.end(), [](auto& r) { return r->process && !r->process->exited(); }));
}

void RankSet::attach_output(Rank& rank, std::unique_ptr<net::Stream> stream, bool is_stderr) {
  if (!stream) return;
  Rank* r = &rank;
  net::Stream* s = stream.get();
  (is_stderr ? rank.err_stream : rank.out_stream) = std::move(stream);
  s->start(
      [this, r, is_stderr](std::string_view bytes) {
        // -u: on as read. Else whole lines, so ranks' lines do not interleave mid-line.
        if (spec_.unbuffered) {
          if (!bytes.empty()) events_.rank_output(r->rank, is_stderr, std::string(bytes));
          return;
        }
        auto& lines = is_stderr ? r->err_lines : r->out_lines;
        std::string batch;
        for (auto& line : lines.feed(bytes)) batch += line;
        if (!batch.empty()) events_.rank_output(r->rank, is_stderr, std::move(batch));
      },
      [this, r, is_stderr](const Error&) {
        auto& lines = is_stderr ? r->err_lines : r->out_lines;
        if (auto rest = lines.flush()) events_.rank_output(r->rank, is_stderr, std::move(*rest));
        events_.rank_pipe_closed(r->rank);
      });
}

void RankSet::pause_output() {
  for (auto& r : ranks_)
    for (auto* stream : {r->out_stream.get(), r->err_stream.get()})
      if (stream) stream->pause_reading();
}

void RankSet::resume_output() {
  for (auto& r : ranks_)
    for (auto* stream : {r->out_stream.get(), r->err_stream.get()})
      if (stream) stream->resume_reading();
}

void RankSet::close_output() {
  for (auto& r : ranks_) {
    if (r->out_stream) r->out_stream->close();
    if (r->err_stream) r->err_stream->close();
  }
}

void RankSet::kill(int signum) {
  for (auto& rank : ranks_)
    if (rank->process && !rank->process->exited()) rank->process->kill_group(signum);
}

void RankSet::kill_rank(int rank, int signum) {
  for (auto& r : ranks_)
    if (r->rank == rank && r->process && !r->process->exited()) r->process->kill_group(signum);
}

void RankSet::input(const std::string& data, bool eof) {
  input_received_ += data.size();
  bool waiting = false;  // an input rank of this node not started yet
  for (auto& rank : ranks_) {
    waiting = waiting || waits_for_input(*rank);
    if (!spec_.gets_input(rank->rank) || !rank->in_stream) continue;
    if (!data.empty()) rank->in_stream->write(data);
    if (eof) rank->in_stream->end({});
  }
  if (eof) input_ended_ = true;
  if (waiting && pending_input_.size() + data.size() > kMaxPendingInputBytes)
    LAT_LOG(warn, "launch", spec_.launch_id, ": stdin beyond ", kMaxPendingInputBytes,
            " bytes before the input rank started is dropped",
            log_fields({{"launch", spec_.launch_id}}));
  else if (waiting)
    pending_input_ += data;
  report_input_taken();
}

void RankSet::report_input_taken() {
  // What the slowest input rank has not taken: queued for its pipe, or held until it starts.
  uint64_t held = 0;
  for (auto& rank : ranks_) {
    if (!spec_.gets_input(rank->rank)) continue;
    if (rank->in_stream) {
      size_t queued = rank->in_stream->write_queue_bytes();
      held = std::max<uint64_t>(held, queued);
      if (queued > 0) rank->in_stream->when_drained([this] { report_input_taken(); });
    } else if (waits_for_input(*rank)) {
      held = std::max<uint64_t>(held, pending_input_.size());
    }
  }
  uint64_t taken = input_received_ - std::min(held, input_received_);
  if (taken < input_reported_ + kInputReportBytes) return;
  input_reported_ = taken;
  events_.input_taken(taken);
}

void RankSet::feed_input(Rank& rank) {
  if (!pending_input_.empty()) rank.in_stream->write(pending_input_);
  if (input_ended_) rank.in_stream->end({});
  report_input_taken();
}

std::vector<std::string> RankSet::bindings() const {
  std::vector<std::string> out;
  for (auto& rank : ranks_)
    if (!rank->cpus.empty()) out.push_back(cat(rank->rank, ':', proc::cpu_list(rank->cpus)));
  return out;
}

std::vector<std::pair<int, int>> RankSet::pids() const {
  std::vector<std::pair<int, int>> out;
  for (auto& rank : ranks_) out.emplace_back(rank->rank, rank->pid);
  return out;
}

}  // namespace lattice::agent
