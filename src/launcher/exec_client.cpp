// run_remote speaks the agent's rpc framing over a blocking Unix socket (local_socket.hpp).
#include "launcher/exec_client.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "base/strings.hpp"
#include "launcher/local_socket.hpp"
#include "rpc/session.hpp"
#include "rpc/transport.hpp"
#include "wire/exec_codec.hpp"

namespace lattice::launcher {
int not_run(const std::string& why) {
  std::fprintf(stderr, "lattice-mpi-launcher: %s\n", why.c_str());
  return kNotRun;
}

Result<RemoteCommand> parse_ssh_command(const std::vector<std::string>& args) {
  size_t i = 0;
  for (; i < args.size() && starts_with(args[i], "-"); ++i) {
    const std::string& opt = args[i];
    // Options with a value, given apart ("-o X") or joined ("-oX").
    if (opt == "-o" || opt == "-p" || opt == "-l" || opt == "-i" || opt == "-F") {
      if (++i == args.size()) return make_error(cat("option ", opt, " needs a value"));
    }
  }
  if (i == args.size()) return make_error("no host given");
  RemoteCommand out;
  out.node = args[i++];
  out.command.assign(args.begin() + static_cast<long>(i), args.end());
  if (out.command.empty()) return make_error(cat("no command given for ", out.node));
  return out;
}

int run_remote(const RemoteCommand& remote, const std::string& socket_path,
               const std::string& token) {
  auto connected = connect_local(socket_path, "the agent");
  if (!connected) return not_run(connected.error().message);
  const int fd = connected->get();
  SocketTransport transport(fd);
  std::optional<int> status;
  rpc::Session::Handlers handlers;
  handlers.on_message = [&](uint64_t, schema::Envelope::Reader envelope) {
    if (envelope.getBody().which() != schema::Envelope::Body::REMOTE_EXEC_EVENT) return;
    auto event = wire::decode_exec_event(envelope.getBody().getRemoteExecEvent());
    if (!event.data.empty()) write_all(event.is_stderr ? 2 : 1, event.data);
    if (!event.exited || status) return;
    if (!event.error.empty())
      status = not_run(event.error);
    else
      status = event.signal ? 128 + event.signal : event.exit_code;
  };
  std::string broken;
  handlers.on_error = [&](const std::string& reason) { broken = reason; };
  rpc::Session session(transport, handlers);
  session.notify(wire::exec_request({token, remote.node, remote.command}));
  char buffer[65536];
  while (!status && broken.empty() && transport.ok()) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    session.receive(std::string_view(buffer, static_cast<size_t>(n)));
  }
  if (status) return *status;
  return not_run(cat("the agent closed the connection before the command on ", remote.node,
                     " ended", broken.empty() ? "" : ": " + broken));
}

}  // namespace lattice::launcher
