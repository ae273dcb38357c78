// run_remote speaks the agent's rpc framing over a blocking Unix socket: this is a one-shot
// client process, not the loop, so plain blocking reads and writes are the simple choice.
#include "launcher/exec_client.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "base/strings.hpp"
#include "rpc/session.hpp"
#include "rpc/transport.hpp"
#include "wire/exec_codec.hpp"

namespace lattice::launcher {
namespace {

constexpr int kRefused = 255;  // ssh's status when it could not run the command

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

class SocketTransport : public rpc::ByteTransport {
 public:
  explicit SocketTransport(int fd) : fd_(fd) {}
  void write(std::string bytes) override { ok_ = ok_ && write_all(fd_, bytes); }
  void close() override { ::shutdown(fd_, SHUT_RDWR); }
  bool ok() const { return ok_; }

 private:
  int fd_;
  bool ok_ = true;
};

int fail(const std::string& why) {
  std::fprintf(stderr, "lattice-mpi-launcher: %s\n", why.c_str());
  return kRefused;
}

}  // namespace

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
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof addr.sun_path) return fail("exec socket path too long");
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::string why = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return fail(cat("cannot reach the agent at ", socket_path, ": ", why));
  }
  SocketTransport transport(fd);
  std::optional<int> status;
  rpc::Session::Handlers handlers;
  handlers.on_message = [&](uint64_t, schema::Envelope::Reader envelope) {
    if (envelope.getBody().which() != schema::Envelope::Body::REMOTE_EXEC_EVENT) return;
    auto event = wire::decode_exec_event(envelope.getBody().getRemoteExecEvent());
    if (!event.data.empty()) write_all(event.is_stderr ? 2 : 1, event.data);
    if (!event.exited || status) return;
    if (!event.error.empty())
      status = fail(event.error);
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
  ::close(fd);
  if (status) return *status;
  return fail(cat("the agent closed the connection before the command on ", remote.node, " ended",
                  broken.empty() ? "" : ": " + broken));
}

}  // namespace lattice::launcher
