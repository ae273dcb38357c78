// TcpListener and UnixListener. The Unix one checks a leftover socket file by connecting to it:
// refused means its server died and the file may go; an answer means another agent is live.
#include "net/listener.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstring>

#include "base/log.hpp"
#include "net/address.hpp"
#include "net/detail/handle.hpp"
#include "net/fd.hpp"

namespace lattice::net {
namespace detail {

int Acceptor::start_listening(uv_stream_t* server) {
  return uv_listen(server, SOMAXCONN, on_connection);
}

void Acceptor::on_connection(uv_stream_t* server, int status) {
  auto* self = owner_of<Acceptor>(server);
  if (!self) return;
  if (status < 0) {
    LAT_LOG_LIMITED(self->errors_, warn, "net", uv_error(status), "accept: ", uv_error(status));
    return;
  }
  Loop& loop = Loop::from(server->loop);
  std::weak_ptr<bool> alive = self->alive_;
  if (self->accepted_this_turn_++ == 0)
    loop.defer([self, alive] {
      if (alive.lock()) self->accepted_this_turn_ = 0;
    });
  if (self->accepted_this_turn_ > kAcceptsPerTurn) {
    // Not accepted now: libuv holds it and stops watching the listener until it is, so the
    // rest of the loop runs before the next turn's accepts.
    loop.defer([self, alive, server] {
      if (alive.lock()) self->accept_one(server);
    });
    return;
  }
  self->accept_one(server);
}

void Acceptor::accept_one(uv_stream_t* server) {
  auto handle = std::make_unique<Handle<uv_any_handle>>();
  int rc = tcp_ ? uv_tcp_init(server->loop, &handle->get()->tcp)
                : uv_pipe_init(server->loop, &handle->get()->pipe, 0);
  if (rc == 0) {
    handle->initialised(nullptr);
    rc = uv_accept(server, handle->stream());
  }
  if (rc != 0) {
    LAT_LOG_LIMITED(errors_, warn, "net", uv_error(rc), "accept: ", uv_error(rc));
    return;
  }
  std::string peer = "unix";
  if (tcp_) {
    sockaddr_storage ss{};
    int len = sizeof ss;
    if (uv_tcp_getpeername(&handle->get()->tcp, reinterpret_cast<sockaddr*>(&ss), &len) == 0)
      peer = address_text(ss);
    uv_tcp_nodelay(&handle->get()->tcp, 1);  // request/response traffic: no Nagle delays
  }
  auto callback = on_accept_;  // a copy: the callback may destroy the listener
  guarded("accept", callback, std::make_unique<Stream>(std::move(handle), std::move(peer)));
}

}  // namespace detail

// ---- TCP ----

TcpListener::TcpListener(AcceptFn on_accept)
    : Acceptor(std::move(on_accept), true), handle_(std::make_unique<Handle<uv_tcp_t>>()) {}

TcpListener::~TcpListener() = default;

Result<std::unique_ptr<TcpListener>> TcpListener::listen(Loop& loop, const std::string& host,
                                                         int port, AcceptFn on_accept) {
  auto addr = numeric_address(host, port);
  if (!addr) return addr.error();
  std::string where = address_text(addr.value());
  std::unique_ptr<TcpListener> self(new TcpListener(std::move(on_accept)));
  int rc = uv_tcp_init(loop.raw(), self->handle_->get());
  if (rc != 0) return make_error(cat("listen on ", where, ": ", uv_error(rc)));
  self->handle_->initialised(static_cast<detail::Acceptor*>(self.get()));
  rc = uv_tcp_bind(self->handle_->get(), reinterpret_cast<const sockaddr*>(&addr.value()), 0);
  if (rc == 0) rc = start_listening(self->handle_->stream());
  if (rc != 0) return make_error(cat("listen on ", where, ": ", uv_error(rc)));
  sockaddr_storage ss{};
  int len = sizeof ss;
  rc = uv_tcp_getsockname(self->handle_->get(), reinterpret_cast<sockaddr*>(&ss), &len);
  if (rc != 0) return make_error(cat("listen on ", where, ": getsockname: ", uv_error(rc)));
  self->bound_ = host_port_of(ss);
  return self;
}

// ---- Unix ----

namespace {

// Removes a socket file whose server is gone; refuses a live one or a non-socket.
Status clear_stale_socket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};  // nothing there
  if (!S_ISSOCK(st.st_mode)) return make_error(cat(path, " exists and is not a socket"));
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe) return make_error(cat("socket: ", std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
    return make_error(cat(path, " is in use by a running server"));
  if (errno != ECONNREFUSED)
    return make_error(cat("cannot check ", path, ": ", std::strerror(errno)));
  LAT_LOG(info, "net", "removing stale socket ", path);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return make_error(cat("cannot remove stale socket ", path, ": ", std::strerror(errno)));
  return {};
}

}  // namespace

UnixListener::UnixListener(AcceptFn on_accept)
    : Acceptor(std::move(on_accept), false), handle_(std::make_unique<Handle<uv_pipe_t>>()) {}

UnixListener::~UnixListener() {
  handle_->close();
  struct stat st {};
  if (!path_.empty() && ::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_)
    ::unlink(path_.c_str());
}

Result<std::unique_ptr<UnixListener>> UnixListener::listen(Loop& loop, const std::string& path,
                                                           AcceptFn on_accept) {
  sockaddr_un probe{};
  if (path.empty() || path.size() >= sizeof probe.sun_path)
    return make_error(cat("socket path '", path, "' is empty or longer than ",
                          sizeof probe.sun_path - 1, " bytes"));
  if (auto cleared = clear_stale_socket(path); !cleared) return cleared.error();

  std::unique_ptr<UnixListener> self(new UnixListener(std::move(on_accept)));
  int rc = uv_pipe_init(loop.raw(), self->handle_->get(), 0);
  if (rc != 0) return make_error(cat("listen on ", path, ": ", uv_error(rc)));
  self->handle_->initialised(static_cast<detail::Acceptor*>(self.get()));
  // Sockets are created 0777 & ~umask: this umask makes the file 0600 from the start (a chmod
  // after bind would leave a window). umask is process-wide; the agent binds from one thread.
  mode_t old_mask = ::umask(0177);
  rc = uv_pipe_bind(self->handle_->get(), path.c_str());
  ::umask(old_mask);
  if (rc != 0) return make_error(cat("listen on ", path, ": ", uv_error(rc)));
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    self->path_ = path;  // ours from here on: the destructor removes it
    self->dev_ = st.st_dev;
    self->ino_ = st.st_ino;
  }
  rc = start_listening(self->handle_->stream());
  if (rc != 0) return make_error(cat("listen on ", path, ": ", uv_error(rc)));
  return self;
}

}  // namespace lattice::net
