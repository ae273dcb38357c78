#include "wire/exec_codec.hpp"

#include "rpc/bytes.hpp"
#include "wire/texts.hpp"

namespace lattice::wire {
rpc::Outgoing exec_request(const ExecRequest& request) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initExecRequest();
  m.setToken(request.token);
  m.setNode(request.node);
  set_texts(m.initCommand(static_cast<unsigned>(request.command.size())), request.command);
  return msg;
}

ExecRequest decode_exec_request(schema::ExecRequest::Reader in) {
  return ExecRequest{in.getToken(), in.getNode(), texts_of(in.getCommand())};
}

rpc::Outgoing remote_exec(const ExecCommand& command) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initRemoteExec();
  m.setLaunchId(command.launch_id);
  m.setExecId(command.exec_id);
  set_texts(m.initCommand(static_cast<unsigned>(command.command.size())), command.command);
  return msg;
}

ExecCommand decode_remote_exec(schema::RemoteExec::Reader in) {
  return ExecCommand{in.getLaunchId(), in.getExecId(), texts_of(in.getCommand())};
}

rpc::Outgoing remote_exec_kill(const std::string& launch_id, uint64_t exec_id) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initRemoteExecKill();
  m.setLaunchId(launch_id);
  m.setExecId(exec_id);
  return msg;
}

ExecCommand decode_remote_exec_kill(schema::RemoteExecKill::Reader in) {
  return ExecCommand{in.getLaunchId(), in.getExecId(), {}};
}

rpc::Outgoing exec_event(const ExecEvent& event) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initRemoteExecEvent();
  m.setLaunchId(event.launch_id);
  m.setExecId(event.exec_id);
  m.setStream(event.is_stderr ? schema::OutputStream::STDERR : schema::OutputStream::STDOUT);
  m.setData(rpc::as_data(event.data));
  m.setExited(event.exited);
  m.setExitCode(event.exit_code);
  m.setSignal(event.signal);
  m.setError(event.error);
  return msg;
}

ExecEvent decode_exec_event(schema::RemoteExecEvent::Reader in) {
  ExecEvent out;
  out.launch_id = in.getLaunchId();
  out.exec_id = in.getExecId();
  out.is_stderr = in.getStream() == schema::OutputStream::STDERR;
  out.data = rpc::as_string(in.getData());
  out.exited = in.getExited();
  out.exit_code = in.getExitCode();
  out.signal = in.getSignal();
  out.error = in.getError();
  return out;
}

}  // namespace lattice::wire
