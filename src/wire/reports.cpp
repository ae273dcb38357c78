#include "wire/reports.hpp"

#include "rpc/bytes.hpp"
#include "wire/failure_codec.hpp"
#include "wire/texts.hpp"

namespace lattice::wire {
namespace {

void fill_accepted(const Accepted& a, schema::LaunchAccepted::Builder m) {
  m.setNodeId(a.node_id);
  m.setRepliedUs(a.replied_us);
  m.setStdinTaken(a.stdin_taken);
  set_texts(m.initBindings(static_cast<unsigned>(a.bindings.size())), a.bindings);
  set_texts(m.initEnvLeftOut(static_cast<unsigned>(a.env_left_out.size())), a.env_left_out);
  m.setUnenforced(a.unenforced);
}

}  // namespace

rpc::Outgoing launch_accepted(const Accepted& accepted) {
  rpc::Outgoing msg;
  fill_accepted(accepted, msg.envelope().initBody().initLaunchAccepted());
  return msg;
}

Accepted decode_accepted(schema::LaunchAccepted::Reader m) {
  std::string unenforced = m.getUnenforced();
  if (unenforced.size() > kMaxUnenforcedBytes) unenforced.resize(kMaxUnenforcedBytes);
  return Accepted{m.getNodeId(),     texts_of(m.getBindings()),   m.getRepliedUs(),
                  m.getStdinTaken(), texts_of(m.getEnvLeftOut()), std::move(unenforced)};
}

rpc::Outgoing output(const std::string& launch_id, int rank, bool is_stderr,
                     std::string_view data) {
  rpc::Outgoing msg;
  auto chunk = msg.envelope().initBody().initOutput();
  chunk.setLaunchId(launch_id);
  chunk.setRank(static_cast<uint32_t>(rank));
  chunk.setStream(is_stderr ? schema::OutputStream::STDERR : schema::OutputStream::STDOUT);
  chunk.setData(rpc::as_data(data));
  return msg;
}

Output decode_output(schema::OutputChunk::Reader m) {
  return Output{m.getLaunchId(), static_cast<int>(m.getRank()),
                m.getStream() == schema::OutputStream::STDERR, rpc::as_string(m.getData())};
}

rpc::Outgoing rank_exit(const RankExit& e) {
  rpc::Outgoing msg;
  auto exit = msg.envelope().initBody().initRankExit();
  exit.setLaunchId(e.launch_id);
  exit.setRank(static_cast<uint32_t>(e.rank));
  exit.setNodeIndex(static_cast<uint32_t>(e.node_index));
  exit.setExitCode(e.status.code);
  exit.setSignal(e.status.signal);
  exit.setPid(e.pid);
  exit.setOutOfMemory(e.status.out_of_memory);
  exit.setMemoryLimit(e.status.memory_limit);
  return msg;
}

RankExit decode_rank_exit(schema::RankExit::Reader m) {
  return RankExit{m.getLaunchId(), static_cast<int>(m.getNodeIndex()),
                  static_cast<int>(m.getRank()), m.getPid(),
                  proc::ExitStatus{m.getExitCode(), m.getSignal(),
                                   m.getOutOfMemory() && m.getSignal() != 0, m.getMemoryLimit()}};
}

rpc::Outgoing stdin_taken(const StdinTaken& t) {
  rpc::Outgoing msg;
  auto taken = msg.envelope().initBody().initStdinTaken();
  taken.setLaunchId(t.launch_id);
  taken.setBytes(t.bytes);
  taken.setNodeIndex(static_cast<uint32_t>(t.node_index));
  return msg;
}

StdinTaken decode_stdin_taken(schema::StdinTaken::Reader m) {
  return StdinTaken{m.getLaunchId(), static_cast<int>(m.getNodeIndex()), m.getBytes()};
}

rpc::Outgoing launch_ended(const LaunchEnded& ended) {
  const auto& times = ended.times;
  rpc::Outgoing msg;
  auto end = msg.envelope().initBody().initLaunchEnded();
  end.setLaunchId(ended.launch_id);
  end.setNodeIndex(static_cast<uint32_t>(ended.node_index));
  end.setFailed(ended.failure.has_value());
  end.setStrays(ended.strays);
  if (ended.failure) encode_failure(*ended.failure, end.initFailure());
  auto late = end.initStragglers(static_cast<unsigned>(ended.stragglers.size()));
  for (unsigned i = 0; i < late.size(); ++i) {
    const Straggler& s = ended.stragglers[i];
    late[i].setRank(static_cast<uint32_t>(s.rank));
    late[i].setPmiState(s.pmi_state);
    late[i].setLastCommand(s.last_command);
    late[i].setIdleMs(s.idle_ms);
  }
  auto t = end.initTimings();
  t.setSpawnedUs(times.spawned_us);
  t.setFirstInitUs(times.first_init_us);
  t.setLastFinalizeUs(times.last_finalize_us);
  t.setExitedUs(times.exited_us);
  t.setUserKnownUs(times.user_known_us);
  auto fences = t.initFences(static_cast<unsigned>(times.fences.size()));
  for (unsigned i = 0; i < fences.size(); ++i) {
    const FenceTimes& f = times.fences[i];
    fences[i].setEpoch(f.epoch);
    fences[i].setEnteredUs(f.entered_us);
    fences[i].setReducedUs(f.reduced_us);
    fences[i].setStoreUs(f.store_us);
    fences[i].setReleasedUs(f.released_us);
  }
  return msg;
}

LaunchEnded decode_launch_ended(schema::LaunchEnded::Reader m) {
  LaunchEnded out;
  out.launch_id = m.getLaunchId();
  out.node_index = static_cast<int>(m.getNodeIndex());
  auto t = m.getTimings();
  out.times = NodeTimes{t.getSpawnedUs(), t.getFirstInitUs(), t.getLastFinalizeUs(),
                        t.getExitedUs(),  t.getUserKnownUs(), {}};
  // Bounded by the agent (64), and again here: a hostile agent's list costs what we keep.
  for (auto f : t.getFences()) {
    if (out.times.fences.size() >= kMaxFencesReported) break;
    out.times.fences.push_back(FenceTimes{f.getEpoch(), f.getEnteredUs(), f.getReducedUs(),
                                          f.getStoreUs(), f.getReleasedUs()});
  }
  for (auto s : m.getStragglers())
    out.stragglers.push_back(Straggler{static_cast<int>(s.getRank()), s.getPmiState(),
                                       s.getLastCommand(), s.getIdleMs()});
  if (m.getFailed()) out.failure = decode_failure(m.getFailure());
  out.strays = m.getStrays();
  return out;
}

rpc::Outgoing node_answer(const NodeAnswer& a) {
  rpc::Outgoing msg;
  auto answer = msg.envelope().initBody().initNodeAnswer();
  answer.setLaunchId(a.launch_id);
  answer.setNodeIndex(static_cast<uint32_t>(a.node_index));
  if (!a.error.empty()) {
    answer.setError(a.error);
    answer.setLost(a.lost);
  } else {
    fill_accepted(a.accepted, answer.initAccepted());
  }
  return msg;
}

NodeAnswer decode_node_answer(schema::NodeAnswer::Reader m) {
  NodeAnswer out;
  out.launch_id = m.getLaunchId();
  out.node_index = static_cast<int>(m.getNodeIndex());
  out.error = m.getError();
  if (out.error.empty())
    out.accepted = decode_accepted(m.getAccepted());
  else
    out.lost = m.getLost();
  return out;
}

rpc::Outgoing copy_of(schema::Envelope::Reader envelope) {
  rpc::Outgoing msg;
  msg.message().setRoot(envelope);
  return msg;
}

}  // namespace lattice::wire
