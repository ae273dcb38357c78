#include "net/listener.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.hpp"

namespace lattice::net {
namespace {

std::string address_text(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (ss.ss_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    uv_ip4_name(in, host, sizeof host);
    port = ntohs(in->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    uv_ip6_name(in6, host, sizeof host);
    port = ntohs(in6->sin6_port);
  }
  return cat(host, ':', port);
}

Result<sockaddr_storage> numeric_address(const std::string& host, int port) {
  sockaddr_storage ss{};
  if (uv_ip4_addr(host.c_str(), port, reinterpret_cast<sockaddr_in*>(&ss)) == 0) return ss;
  if (uv_ip6_addr(host.c_str(), port, reinterpret_cast<sockaddr_in6*>(&ss)) == 0) return ss;
  return make_error(cat("'", host, "' is not a numeric address"));
}

// Accept one pending connection into a fresh handle of the listener's kind.
std::unique_ptr<Stream> accept_one(uv_stream_t* server, bool tcp) {
  auto handle = std::make_unique<Handle<uv_any_handle>>();
  int rc = tcp ? uv_tcp_init(server->loop, &handle->get()->tcp)
               : uv_pipe_init(server->loop, &handle->get()->pipe, 0);
  if (rc != 0) return nullptr;
  handle->initialised(nullptr);
  if (uv_accept(server, reinterpret_cast<uv_stream_t*>(handle->get())) != 0) return nullptr;
  std::string peer = "unix";
  if (tcp) {
    sockaddr_storage ss{};
    int len = sizeof ss;
    if (uv_tcp_getpeername(&handle->get()->tcp, reinterpret_cast<sockaddr*>(&ss), &len) == 0)
      peer = address_text(ss);
    uv_tcp_nodelay(&handle->get()->tcp, 1);
  }
  return std::make_unique<Stream>(std::move(handle), peer);
}

}  // namespace

// ---- TCP ----

TcpListener::TcpListener(Loop& loop, AcceptFn on_accept)
    : loop_(loop), on_accept_(std::move(on_accept)) {}

Result<std::unique_ptr<TcpListener>> TcpListener::listen(Loop& loop, const std::string& host,
                                                          int port, AcceptFn on_accept) {
  auto addr = numeric_address(host, port);
  if (!addr) return addr.error();
  std::unique_ptr<TcpListener> self(new TcpListener(loop, std::move(on_accept)));
  int rc = uv_tcp_init(loop.raw(), self->handle_.get());
  if (rc != 0) return make_error(cat("uv_tcp_init: ", uv_error(rc)));
  self->handle_.initialised(self.get());
  rc = uv_tcp_bind(self->handle_.get(), reinterpret_cast<const sockaddr*>(&addr.value()), 0);
  if (rc == 0)
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(self->handle_.get()), SOMAXCONN,
                   [](uv_stream_t* server, int status) {
                     auto* l = static_cast<TcpListener*>(server->data);
                     if (!l || status < 0) return;
                     if (auto stream = accept_one(server, true)) l->on_accept_(std::move(stream));
                   });
  if (rc != 0) return make_error(uv_error(rc));
  sockaddr_storage ss{};
  int len = sizeof ss;
  uv_tcp_getsockname(self->handle_.get(), reinterpret_cast<sockaddr*>(&ss), &len);
  std::string text = address_text(ss);
  auto hp = parse_host_port(ss.ss_family == AF_INET6 ? cat('[', text.substr(0, text.rfind(':')),
                                                           ']', text.substr(text.rfind(':')))
                                                     : text);
  if (hp) self->bound_ = *hp;
  return self;
}

// ---- Unix ----

UnixListener::UnixListener(Loop& loop, std::string path, AcceptFn on_accept)
    : loop_(loop), path_(std::move(path)), on_accept_(std::move(on_accept)) {}

UnixListener::~UnixListener() {
  handle_.close();
  ::unlink(path_.c_str());
}

Result<std::unique_ptr<UnixListener>> UnixListener::listen(Loop& loop, const std::string& path,
                                                            AcceptFn on_accept) {
  sockaddr_un probe{};
  if (path.empty() || path.size() >= sizeof probe.sun_path)
    return make_error(cat("socket path '", path, "' is empty or too long"));
  // A socket file left by a dead process is replaced; one with a live server is not.
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) return make_error(cat(path, " exists and is not a socket"));
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    probe.sun_family = AF_UNIX;
    std::memcpy(probe.sun_path, path.c_str(), path.size() + 1);
    bool live = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&probe), sizeof probe) == 0;
    if (fd >= 0) ::close(fd);
    if (live) return make_error(cat(path, " is in use by a running server"));
    ::unlink(path.c_str());
  }
  std::unique_ptr<UnixListener> self(new UnixListener(loop, path, std::move(on_accept)));
  int rc = uv_pipe_init(loop.raw(), self->handle_.get(), 0);
  if (rc != 0) return make_error(cat("uv_pipe_init: ", uv_error(rc)));
  self->handle_.initialised(self.get());
  mode_t old = ::umask(0077);  // the socket file is created 0600
  rc = uv_pipe_bind(self->handle_.get(), path.c_str());
  ::umask(old);
  if (rc == 0)
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(self->handle_.get()), SOMAXCONN,
                   [](uv_stream_t* server, int status) {
                     auto* l = static_cast<UnixListener*>(server->data);
                     if (!l || status < 0) return;
                     if (auto stream = accept_one(server, false)) l->on_accept_(std::move(stream));
                   });
  if (rc != 0) {
    self->path_.clear();  // not ours to unlink
    return make_error(uv_error(rc));
  }
  ::chmod(path.c_str(), 0600);
  return self;
}

// ---- connect ----

namespace {

struct ConnectOp {
  uv_connect_t req;
  std::unique_ptr<Handle<uv_any_handle>> handle;
  std::string peer;
  std::function<void(Result<std::unique_ptr<Stream>>)> done;
};

void start_connect(uv_loop_t* loop, const sockaddr* addr, std::string peer,
                   std::function<void(Result<std::unique_ptr<Stream>>)> done) {
  auto* op = new ConnectOp{};
  op->peer = std::move(peer);
  op->done = std::move(done);
  op->handle = std::make_unique<Handle<uv_any_handle>>();
  int rc = uv_tcp_init(loop, &op->handle->get()->tcp);
  if (rc == 0) {
    op->handle->initialised(nullptr);
    op->req.data = op;
    rc = uv_tcp_connect(&op->req, &op->handle->get()->tcp, addr, [](uv_connect_t* req, int status) {
      std::unique_ptr<ConnectOp> op(static_cast<ConnectOp*>(req->data));
      if (status < 0) return op->done(make_error(uv_error(status)));
      uv_tcp_nodelay(&op->handle->get()->tcp, 1);
      op->done(std::make_unique<Stream>(std::move(op->handle), op->peer));
    });
  }
  if (rc != 0) {
    std::unique_ptr<ConnectOp> owned(op);
    owned->done(make_error(uv_error(rc)));
  }
}

struct ResolveOp {
  uv_getaddrinfo_t req;
  int port;
  std::string peer;
  std::function<void(Result<std::unique_ptr<Stream>>)> done;
};

}  // namespace

void connect_tcp(Loop& loop, const std::string& host, int port,
                 std::function<void(Result<std::unique_ptr<Stream>>)> done) {
  std::string peer = cat(host, ':', port);
  if (auto addr = numeric_address(host, port))
    return start_connect(loop.raw(), reinterpret_cast<const sockaddr*>(&addr.value()), peer,
                         std::move(done));
  auto* op = new ResolveOp{};
  op->port = port;
  op->peer = peer;
  op->done = std::move(done);
  op->req.data = op;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  int rc = uv_getaddrinfo(
      loop.raw(), &op->req,
      [](uv_getaddrinfo_t* req, int status, addrinfo* res) {
        std::unique_ptr<ResolveOp> op(static_cast<ResolveOp*>(req->data));
        if (status < 0 || !res) {
          if (res) uv_freeaddrinfo(res);
          return op->done(make_error(cat("cannot resolve: ", uv_error(status))));
        }
        sockaddr_storage ss{};
        std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
        uv_freeaddrinfo(res);
        if (ss.ss_family == AF_INET)
          reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(static_cast<uint16_t>(op->port));
        else
          reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(static_cast<uint16_t>(op->port));
        start_connect(req->loop, reinterpret_cast<sockaddr*>(&ss), op->peer, std::move(op->done));
      },
      host.c_str(), nullptr, &hints);
  if (rc != 0) {
    std::unique_ptr<ResolveOp> owned(op);
    owned->done(make_error(cat("cannot resolve: ", uv_error(rc))));
  }
}

}  // namespace lattice::net
