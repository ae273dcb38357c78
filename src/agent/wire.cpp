#include "agent/wire.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "base/strings.hpp"
#include "fence/kv_pack.hpp"
#include "rpc/bytes.hpp"
#include "wire/failure_codec.hpp"

namespace lattice::agent::wire {
namespace {

// Capnp words a text of `bytes` takes (its NUL included).
size_t text_words(size_t bytes) { return (bytes + 1 + 7) / 8; }

// PmiFence (up) and PmiFenceComplete (down) carry a chunk the same way.
template <class Reader>
Result<FenceMessage> decode_chunk(Reader m, bool down) {
  FenceMessage out;
  out.launch_id = m.getLaunchId();
  out.down = down;
  out.from = static_cast<int>(m.getFromNode());
  out.chunk.epoch = m.getEpoch();
  out.chunk.index = m.getChunkIndex();
  out.chunk.count = m.getChunkCount();
  auto data = m.getEntries();
  std::string_view packed(reinterpret_cast<const char*>(data.begin()), data.size());
  auto keys = fence::count_packed(packed);
  if (!keys)
    return make_error(cat("a fence chunk from node ", out.from, " for launch ", out.launch_id,
                          " is malformed: ", keys.error().message));
  out.chunk.keys = keys.value();
  out.chunk.entries = std::make_shared<const std::string>(packed);  // its one copy here
  return out;
}

template <class Builder>
Builder fill_chunk(Builder m, const std::string& launch_id, int from, const fence::Chunk& chunk) {
  m.setLaunchId(launch_id);
  m.setEpoch(chunk.epoch);
  m.setFromNode(static_cast<uint32_t>(from));
  m.setChunkIndex(chunk.index);
  m.setChunkCount(chunk.count);
  const std::string& packed = *chunk.entries;
  auto data = m.initEntries(static_cast<unsigned>(packed.size()));
  std::memcpy(data.begin(), packed.data(), packed.size());
  return m;
}

}  // namespace

Result<FenceMessage> decode_fence_up(schema::PmiFence::Reader m) { return decode_chunk(m, false); }

Result<FenceMessage> decode_fence_down(schema::PmiFenceComplete::Reader m) {
  auto out = decode_chunk(m, true);
  if (out) out->error = m.getErrorMessage();
  return out;
}

rpc::Outgoing fence_chunk(const std::string& launch_id, int from, bool down,
                          const fence::Chunk& chunk, const std::string& error) {
  // The message's size, so that it is one segment (rpc/outgoing.hpp): the envelope and chunk
  // structs, the texts, and the packed entries.
  const size_t packed = chunk.entries->size();
  const size_t words =
      32 + text_words(launch_id.size()) + text_words(error.size()) + (packed + 7) / 8;
  rpc::Outgoing msg(static_cast<unsigned>(words));
  auto body = msg.envelope().initBody();
  if (down)
    fill_chunk(body.initPmiFenceComplete(), launch_id, from, chunk).setErrorMessage(error);
  else
    fill_chunk(body.initPmiFence(), launch_id, from, chunk);
  return msg;
}

NameRequest decode_name(schema::PmiName::Reader m) {
  NameRequest out;
  out.launch_id = m.getLaunchId();
  switch (m.getOp()) {
    case schema::NameOp::PUBLISH:
      out.op = pmi::NameOp::publish;
      break;
    case schema::NameOp::UNPUBLISH:
      out.op = pmi::NameOp::unpublish;
      break;
    default:
      out.op = pmi::NameOp::lookup;
      break;  // lookups change nothing: the safe reading
  }
  out.name = m.getName();
  out.port = m.getPort();
  return out;
}

rpc::Outgoing name_request(const NameRequest& request) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmiName();
  m.setLaunchId(request.launch_id);
  m.setOp(request.op == pmi::NameOp::publish     ? schema::NameOp::PUBLISH
          : request.op == pmi::NameOp::unpublish ? schema::NameOp::UNPUBLISH
                                                 : schema::NameOp::LOOKUP);
  m.setName(request.name);
  m.setPort(request.port);
  return msg;
}

rpc::Outgoing name_answer(const std::string& port) {
  rpc::Outgoing msg;
  msg.envelope().initBody().initPmiName().setPort(port);
  return msg;
}

Result<std::string> decode_name_answer(const Result<schema::Envelope::Reader>& reply) {
  if (!reply) return reply.error();
  auto body = reply->getBody();
  if (!body.isPmiName()) return make_error("the head's answer to a name request is no PmiName");
  return std::string(body.getPmiName().getPort());
}

ModexRequest decode_modex(schema::PmixModex::Reader m) {
  return ModexRequest{m.getLaunchId(),
                      static_cast<int>(std::min<uint32_t>(m.getRank(), INT32_MAX))};
}

rpc::Outgoing modex_request(const ModexRequest& request) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initPmixModex();
  m.setLaunchId(request.launch_id);
  m.setRank(static_cast<uint32_t>(request.rank));
  return msg;
}

rpc::Outgoing modex_answer(const std::string& data) {
  rpc::Outgoing msg;
  msg.envelope().initBody().initPmixModex().setData(rpc::as_data(data));
  return msg;
}

Result<std::string> decode_modex_answer(const Result<schema::Envelope::Reader>& reply) {
  if (!reply) return reply.error();
  auto body = reply->getBody();
  if (!body.isPmixModex()) return make_error("the answer to a direct modex is no PmixModex");
  return rpc::as_string(body.getPmixModex().getData());
}

rpc::Outgoing launch_accepted(const std::string& node_id, const std::vector<std::string>& bindings,
                              uint64_t replied_us, const std::vector<std::string>& env_left_out) {
  rpc::Outgoing msg;
  auto accepted = msg.envelope().initBody().initLaunchAccepted();
  accepted.setNodeId(node_id);
  accepted.setRepliedUs(replied_us);
  accepted.setStdinTaken(true);
  auto list = accepted.initBindings(static_cast<unsigned>(bindings.size()));
  for (unsigned i = 0; i < list.size(); ++i) list.set(i, bindings[i]);
  auto left_out = accepted.initEnvLeftOut(static_cast<unsigned>(env_left_out.size()));
  for (unsigned i = 0; i < left_out.size(); ++i) left_out.set(i, env_left_out[i]);
  return msg;
}

rpc::Outgoing stdin_taken(const std::string& launch_id, int node_index, uint64_t bytes) {
  rpc::Outgoing msg;
  auto taken = msg.envelope().initBody().initStdinTaken();
  taken.setLaunchId(launch_id);
  taken.setBytes(bytes);
  taken.setNodeIndex(static_cast<uint32_t>(node_index));
  return msg;
}

rpc::Outgoing node_answer(const std::string& launch_id, int node_index,
                          const Result<schema::Envelope::Reader>& reply, bool lost) {
  rpc::Outgoing msg;
  auto answer = msg.envelope().initBody().initNodeAnswer();
  answer.setLaunchId(launch_id);
  answer.setNodeIndex(static_cast<uint32_t>(node_index));
  if (!reply) {
    answer.setError(reply.error().message);
    answer.setLost(lost);
  } else if (reply->getBody().isLaunchAccepted()) {
    answer.setAccepted(reply->getBody().getLaunchAccepted());
  }
  return msg;
}

rpc::Outgoing copy_of(schema::Envelope::Reader envelope) {
  rpc::Outgoing msg;
  msg.message().setRoot(envelope);
  return msg;
}

rpc::Outgoing relayed_request(schema::LaunchProcessesRequest::Reader request, int node_index) {
  rpc::Outgoing msg;
  msg.envelope().initBody().setLaunchProcesses(request);
  msg.envelope().getBody().getLaunchProcesses().setNodeIndex(static_cast<uint32_t>(node_index));
  // The copy holds the launch's CXI key as the original does: wiped with the message.
  if (request.getCxiCredentials().getAuthKey().size()) msg.mark_secret();
  return msg;
}

rpc::Outgoing output(const std::string& launch_id, int rank, bool is_stderr,
                     const std::string& data) {
  rpc::Outgoing msg;
  auto chunk = msg.envelope().initBody().initOutput();
  chunk.setLaunchId(launch_id);
  chunk.setRank(static_cast<uint32_t>(rank));
  chunk.setStream(is_stderr ? schema::OutputStream::STDERR : schema::OutputStream::STDOUT);
  chunk.setData(rpc::as_data(data));
  return msg;
}

rpc::Outgoing rank_exit(const std::string& launch_id, int node_index, int rank, int pid,
                        proc::ExitStatus status) {
  rpc::Outgoing msg;
  auto exit = msg.envelope().initBody().initRankExit();
  exit.setLaunchId(launch_id);
  exit.setRank(static_cast<uint32_t>(rank));
  exit.setNodeIndex(static_cast<uint32_t>(node_index));
  exit.setExitCode(status.code);
  exit.setSignal(status.signal);
  exit.setPid(pid);
  return msg;
}

rpc::Outgoing launch_ended(const std::string& launch_id, int node_index, const LaunchEnd& ended) {
  const auto& failure = ended.failure;
  const auto& stragglers = ended.stragglers;
  const auto& times = ended.times;
  rpc::Outgoing msg;
  auto end = msg.envelope().initBody().initLaunchEnded();
  end.setLaunchId(launch_id);
  end.setNodeIndex(static_cast<uint32_t>(node_index));
  end.setFailed(failure.has_value());
  end.setStrays(ended.strays);
  if (failure) lattice::wire::encode_failure(*failure, end.initFailure());
  auto late = end.initStragglers(static_cast<unsigned>(stragglers.size()));
  for (unsigned i = 0; i < late.size(); ++i) {
    late[i].setRank(static_cast<uint32_t>(stragglers[i].rank));
    late[i].setPmiState(stragglers[i].pmi_state);
    late[i].setLastCommand(stragglers[i].last_command);
    late[i].setIdleMs(stragglers[i].idle_ms);
  }
  auto t = end.initTimings();
  t.setSpawnedUs(times.spawned_us);
  t.setFirstInitUs(times.first_init_us);
  t.setLastFinalizeUs(times.last_finalize_us);
  t.setExitedUs(times.exited_us);
  t.setUserKnownUs(times.user_known_us);
  const auto& log = times.fences.fences();
  auto fences = t.initFences(static_cast<unsigned>(log.size()));
  for (unsigned i = 0; i < fences.size(); ++i) {
    const FencePhases& f = log[i];
    fences[i].setEpoch(f.epoch);
    fences[i].setEnteredUs(f.entered_us);
    fences[i].setReducedUs(f.reduced_us);
    fences[i].setStoreUs(f.store_us);
    fences[i].setReleasedUs(f.released_us);
  }
  return msg;
}

}  // namespace lattice::agent::wire
