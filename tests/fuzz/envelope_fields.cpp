// Typed reads mirror src/agent and src/launcher (launch_spec.cpp, the fence and exit handlers):
// texts become std::string, lists are iterated, has*() guards optional structs. Keep one line
// per schema field; the dynamic walk at the end is the safety net, not a substitute.
#include "envelope_fields.hpp"

#include <capnp/dynamic.h>
#include <capnp/message.h>
#include <capnp/schema.h>

#include <string>

#include "fence/kv_pack.hpp"
#include "wire/connect_codec.hpp"
#include "wire/exec_codec.hpp"
#include "wire/names_codec.hpp"
#include "wire/spawn_codec.hpp"

namespace lattice::fuzz {
namespace {

size_t text(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()).size(); }

// Fence entries travel packed; the agent counts them, and views them later (wire/fence_chunk.cpp).
size_t entries(capnp::Data::Reader packed) {
  std::string_view bytes(reinterpret_cast<const char*>(packed.begin()), packed.size());
  if (!fence::count_packed(bytes)) return 0;
  std::vector<KvView> list;
  fence::view_packed(bytes, list);
  size_t n = 0;
  for (const auto& [key, value] : list) n += key.size() + value.size();
  return n;
}

size_t failure(schema::Failure::Reader f) {
  return static_cast<size_t>(f.getKind()) + text(f.getDetail()) +
         static_cast<size_t>(f.getExitCode()) + static_cast<size_t>(f.getRank()) +
         text(f.getNode()) + f.getFenceEpoch() + static_cast<size_t>(f.getSignal()) +
         f.getExitCodeGiven() + f.getTimeoutMs() + text(f.getPeer());
}

size_t launch(schema::LaunchProcessesRequest::Reader r) {
  size_t n = text(r.getLaunchId()) + text(r.getAllocationId()) + text(r.getEntrypoint());
  for (auto arg : r.getArgs()) n += text(arg);
  n += r.getTasksPerNode() + r.getFirstRank() + r.getWorldSize();
  for (auto var : r.getEnv()) n += text(var.getName()) + text(var.getValue());
  n += static_cast<size_t>(r.getPmiMode());
  if (r.hasCxiCredentials()) {
    auto cxi = r.getCxiCredentials();
    n += cxi.getVni() + cxi.getSvcId() + cxi.getAuthKey().size();
  }
  for (auto peer : r.getPeers())
    n += text(peer.getNodeId()) + text(peer.getHost()) + peer.getPort();
  n += r.getHeadNodeIndex() + r.getNodeIndex();
  for (uint32_t node : r.getRankNodes()) n += node;
  if (r.hasPeerList()) {
    auto list = r.getPeerList();
    n += text(list.getNodeIds()) + text(list.getHosts());
    for (uint16_t port : list.getPorts()) n += port;
  }
  if (r.hasRankLayout()) {
    n += r.getRankLayout().getCyclic();
    for (auto block : r.getRankLayout().getBlocks()) n += block.getNodes() + block.getRanksEach();
  }
  n += r.getFenceTimeoutMs() + r.getSlurmCompat() + text(r.getWorkdir()) + r.getFanout() +
       r.getUsePmiPort();
  if (r.hasUser()) {
    auto user = r.getUser();
    n += user.getUid() + user.getGid() + text(user.getName());
    if (user.hasGroups())
      for (uint32_t group : user.getGroups()) n += group;
  }
  n += r.getTimeLimitMs() + r.getKillOnBadExit();
  if (r.hasAppSetup()) {
    auto setup = r.getAppSetup();
    for (auto var : setup.getEnvironment()) n += text(var.getName()) + text(var.getValue());
    n += setup.getVendor().size();
  }
  n += static_cast<size_t>(r.getInputRank()) + static_cast<size_t>(r.getCpuBind().getKind());
  for (uint32_t cpu : r.getCpuBind().getCpus()) n += cpu;
  for (auto mask : r.getCpuBind().getMasks())
    for (uint32_t cpu : mask) n += cpu;
  n += r.getCpusPerTask();
  if (r.hasGpus()) {
    auto gpus = r.getGpus();
    n += gpus.getPerTask() + gpus.getPerNode() + static_cast<size_t>(gpus.getBind());
    for (uint32_t place : gpus.getMap()) n += place;
  }
  for (auto app : r.getApps()) {
    n += text(app.getEntrypoint()) + app.getSize();
    for (auto arg : app.getArgs()) n += text(arg);
    for (auto var : app.getEnv()) n += text(var.getName()) + text(var.getValue());
  }
  return n;
}

size_t body(schema::Envelope::Body::Reader b) {
  switch (b.which()) {
    case schema::Envelope::Body::NONE:
    case schema::Envelope::Body::HEARTBEAT:
    case schema::Envelope::Body::CLOSE_LINK:
      return 1;
    case schema::Envelope::Body::LAUNCH_PROCESSES:
      return launch(b.getLaunchProcesses());
    case schema::Envelope::Body::LAUNCH_ACCEPTED: {
      auto a = b.getLaunchAccepted();
      size_t n = text(a.getNodeId()) + a.getRepliedUs() + a.getStdinTaken();
      for (auto binding : a.getBindings()) n += text(binding);
      return n;
    }
    case schema::Envelope::Body::ABORT_PROCESSES: {
      auto a = b.getAbortProcesses();
      return text(a.getLaunchId()) + failure(a.getFailure());
    }
    case schema::Envelope::Body::OUTPUT: {
      auto o = b.getOutput();
      auto data = o.getData();
      return text(o.getLaunchId()) + o.getRank() + static_cast<size_t>(o.getStream()) +
             std::string(reinterpret_cast<const char*>(data.begin()), data.size()).size();
    }
    case schema::Envelope::Body::RANK_EXIT: {
      auto e = b.getRankExit();
      return text(e.getLaunchId()) + e.getRank() + e.getNodeIndex() +
             static_cast<size_t>(e.getExitCode()) + static_cast<size_t>(e.getSignal()) +
             static_cast<size_t>(e.getPid());
    }
    case schema::Envelope::Body::LAUNCH_ENDED: {
      auto e = b.getLaunchEnded();
      size_t n = text(e.getLaunchId()) + e.getNodeIndex() + e.getFailed() + failure(e.getFailure());
      if (e.hasTimings()) {
        auto t = e.getTimings();
        n += t.getSpawnedUs() + t.getFirstInitUs() + t.getLastFinalizeUs() + t.getExitedUs() +
             t.getUserKnownUs();
      }
      for (auto late : e.getStragglers())
        n += late.getRank() + text(late.getPmiState()) + text(late.getLastCommand()) +
             late.getIdleMs();
      return n;
    }
    case schema::Envelope::Body::PMI_FENCE: {
      auto f = b.getPmiFence();
      return text(f.getLaunchId()) + f.getEpoch() + f.getFromNode() + entries(f.getEntries()) +
             f.getChunkIndex() + f.getChunkCount();
    }
    case schema::Envelope::Body::PMI_FENCE_COMPLETE: {
      auto f = b.getPmiFenceComplete();
      return text(f.getLaunchId()) + f.getEpoch() + entries(f.getEntries()) +
             text(f.getErrorMessage()) + f.getChunkIndex() + f.getChunkCount() + f.getFromNode();
    }
    case schema::Envelope::Body::SIGNAL_PROCESSES: {
      auto s = b.getSignalProcesses();
      return text(s.getLaunchId()) + static_cast<size_t>(s.getSignal());
    }
    case schema::Envelope::Body::STDIN_CHUNK: {
      auto s = b.getStdinChunk();
      return text(s.getLaunchId()) + s.getData().size() + s.getEof();
    }
    case schema::Envelope::Body::STDIN_TAKEN: {
      auto t = b.getStdinTaken();
      return text(t.getLaunchId()) + t.getBytes() + t.getNodeIndex();
    }
    case schema::Envelope::Body::NODE_ANSWER: {
      auto a = b.getNodeAnswer();
      auto accepted = a.getAccepted();
      size_t n = text(a.getLaunchId()) + a.getNodeIndex() + text(a.getError()) + a.getLost() +
                 text(accepted.getNodeId()) + accepted.getRepliedUs();
      for (auto binding : accepted.getBindings()) n += text(binding);
      return n;
    }
    case schema::Envelope::Body::PMI_NAME: {
      auto n = wire::decode_name(b.getPmiName());
      return n.launch_id.size() + static_cast<size_t>(n.op) + n.name.size() + n.port.size() +
             n.nspace.size() + static_cast<size_t>(n.rank) + n.scope + n.wait_ms;
    }
    case schema::Envelope::Body::PMIX_CONNECT: {
      auto c = wire::decode_collective(b.getPmixConnect());
      if (!c) return c.error().message.size();
      size_t n =
          c->launch_id.size() + static_cast<size_t>(c->kind) + c->data.size() + c->group.size();
      for (const auto& p : c->procs) n += p.nspace.size() + static_cast<size_t>(p.rank);
      return n;
    }
    case schema::Envelope::Body::PMIX_MODEX: {
      auto m = b.getPmixModex();
      return text(m.getLaunchId()) + m.getRank() + m.getData().size();
    }
    // PMIx_Spawn, through the decoder the head agent and the launcher use.
    case schema::Envelope::Body::PMIX_SPAWN: {
      auto s = wire::decode_spawn(b.getPmixSpawn());
      if (!s) return s.error().message.size();
      size_t n = s->launch_id.size() + s->rank + s->workdir.size() + s->hosts.size();
      for (const auto& app : s->apps) n += app.entrypoint.size() + app.args.size() + app.env.size();
      return n;
    }
    case schema::Envelope::Body::PMIX_FAMILY: {
      auto f = wire::decode_family_notice(b.getPmixFamily());
      if (!f) return f.error().message.size();
      return f->launch_id.size() + f->child.launch_id.size() + f->child.rank_nodes.size();
    }
    case schema::Envelope::Body::AGENT_STATUS: {
      auto st = b.getAgentStatus();
      return st.getLaunchId().size() + st.getText().size() + (st.getJson() ? 1 : 0);
    }
    // The escape hatch's bodies, through the decoders the agent and lattice-mpi-launcher use.
    case schema::Envelope::Body::REMOTE_EXEC: {
      auto c = wire::decode_remote_exec(b.getRemoteExec());
      return c.launch_id.size() + c.exec_id + c.command.size();
    }
    case schema::Envelope::Body::REMOTE_EXEC_EVENT: {
      auto e = wire::decode_exec_event(b.getRemoteExecEvent());
      // (Each widened on its own: a hostile exit code plus a signal can overflow an int.)
      return e.launch_id.size() + e.exec_id + e.data.size() + e.error.size() +
             static_cast<size_t>(e.exit_code) + static_cast<size_t>(e.signal);
    }
    case schema::Envelope::Body::REMOTE_EXEC_KILL: {
      auto k = wire::decode_remote_exec_kill(b.getRemoteExecKill());
      return k.launch_id.size() + k.exec_id;
    }
    case schema::Envelope::Body::EXEC_REQUEST: {
      auto r = wire::decode_exec_request(b.getExecRequest());
      return r.token.size() + r.node.size() + r.command.size();
    }
  }
  return 0;  // a union member newer than this file: the dynamic walk reads it
}

size_t walk(capnp::DynamicValue::Reader value) {
  switch (value.getType()) {
    case capnp::DynamicValue::TEXT:
      return value.as<capnp::Text>().size();
    case capnp::DynamicValue::DATA:
      return value.as<capnp::Data>().size();
    case capnp::DynamicValue::LIST: {
      size_t n = 0;
      for (auto element : value.as<capnp::DynamicList>()) n += walk(element);
      return n;
    }
    case capnp::DynamicValue::STRUCT: {
      auto s = value.as<capnp::DynamicStruct>();
      size_t n = 0;
      for (auto field : s.getSchema().getNonUnionFields()) n += walk(s.get(field));
      KJ_IF_MAYBE (field, s.which()) {
        n += walk(s.get(*field));
      }
      return n;
    }
    case capnp::DynamicValue::ENUM:
      return value.as<capnp::DynamicEnum>().getRaw();
    case capnp::DynamicValue::BOOL:
      return value.as<bool>();
    case capnp::DynamicValue::INT:
      return static_cast<size_t>(value.as<int64_t>());
    case capnp::DynamicValue::UINT:
      return static_cast<size_t>(value.as<uint64_t>());
    default:
      return 0;
  }
}

}  // namespace

size_t read_every_field(schema::Envelope::Reader envelope) {
  size_t n = envelope.getRequestId() + envelope.getIsResponse() + text(envelope.getError()) +
             body(envelope.getBody());
  // A relaying agent copies what it passes up or down (wire/reports.hpp copy_of) as this does.
  capnp::MallocMessageBuilder copy;
  copy.setRoot(envelope);
  n += copy.sizeInWords();
  return n + walk(capnp::toDynamic(envelope));
}

}  // namespace lattice::fuzz
