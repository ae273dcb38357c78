#include "wire/failure_codec.hpp"

namespace lattice::wire {
namespace {

// The two enums name the same kinds in the same order (checked where they are converted).
static_assert(static_cast<int>(schema::FailureKind::OUT_OF_MEMORY) ==
              static_cast<int>(policy::FailureKind::out_of_memory));

}  // namespace

void encode_failure(const policy::Failure& f, schema::Failure::Builder out) {
  out.setKind(static_cast<schema::FailureKind>(f.kind));
  out.setDetail(f.detail);
  out.setExitCode(f.exit_code);
  out.setRank(f.rank);
  out.setNode(f.node);
  out.setFenceEpoch(f.fence_epoch);
  out.setSignal(f.signal);
  out.setExitCodeGiven(f.exit_code_given);
  out.setTimeoutMs(f.timeout_ms);
  out.setPeer(f.peer);
  out.setMemoryLimit(f.memory_limit);
  out.setPeerEnded(f.peer_ended);
}

policy::Failure decode_failure(schema::Failure::Reader in) {
  policy::Failure f;
  // A kind newer than this build is shown by its detail alone.
  auto kind = static_cast<int>(in.getKind());
  f.kind = kind <= static_cast<int>(policy::FailureKind::out_of_memory)
               ? static_cast<policy::FailureKind>(kind)
               : policy::FailureKind::other;
  f.detail = in.getDetail();
  f.exit_code = in.getExitCode() != 0 ? in.getExitCode() : 1;  // a failure never exits 0
  f.rank = in.getRank();
  f.node = in.getNode();
  f.fence_epoch = in.getFenceEpoch();
  f.signal = in.getSignal();
  f.exit_code_given = in.getExitCodeGiven();
  f.timeout_ms = in.getTimeoutMs();
  f.peer = in.getPeer();
  f.memory_limit = in.getMemoryLimit();
  f.peer_ended = in.getPeerEnded();
  return f;
}

rpc::Outgoing abort_message(const std::string& launch_id, const policy::Failure& failure) {
  rpc::Outgoing msg;
  auto abort = msg.envelope().initBody().initAbortProcesses();
  abort.setLaunchId(launch_id);
  encode_failure(failure, abort.initFailure());
  return msg;
}

policy::Failure decode_abort(schema::AbortProcesses::Reader in) {
  return decode_failure(in.getFailure());
}

}  // namespace lattice::wire
