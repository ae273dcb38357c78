#include "wire/control.hpp"

#include "rpc/bytes.hpp"

namespace lattice::wire {

rpc::Outgoing signal(const Signal& s) {
  rpc::Outgoing msg;
  auto sig = msg.envelope().initBody().initSignalProcesses();
  sig.setLaunchId(s.launch_id);
  sig.setSignal(s.signum);
  return msg;
}

Signal decode_signal(schema::SignalProcesses::Reader m) {
  return Signal{m.getLaunchId(), m.getSignal()};
}

rpc::Outgoing stdin_chunk(const std::string& launch_id, std::string_view data, bool eof) {
  rpc::Outgoing msg;
  auto m = msg.envelope().initBody().initStdinChunk();
  m.setLaunchId(launch_id);
  m.setData(rpc::as_data(data));
  m.setEof(eof);
  return msg;
}

StdinChunk decode_stdin_chunk(schema::StdinChunk::Reader m) {
  return StdinChunk{m.getLaunchId(), rpc::as_string(m.getData()), m.getEof()};
}

}  // namespace lattice::wire
