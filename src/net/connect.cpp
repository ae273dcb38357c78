// connect_tcp: an optional name lookup, then uv_tcp_connect. Each in-flight connect is one heap
// ConnectOp owned by its pending libuv request; the request's callback takes it back.
#include "net/connect.hpp"

#include <uv.h>

#include <cstring>

#include "net/address.hpp"
#include "net/detail/handle.hpp"

namespace lattice::net {
namespace {

struct ConnectOp {
  union {
    uv_getaddrinfo_t resolve;
    uv_connect_t connect;
  } req;
  int port = 0;
  std::string peer;  // "host:port" as the caller named it, for messages and Stream::peer()
  std::unique_ptr<Handle<uv_any_handle>> handle;
  ConnectFn done;
};

// Reports from the loop, never from inside connect_tcp().
void fail_later(Loop& loop, std::unique_ptr<ConnectOp> op, const std::string& why) {
  loop.defer([done = std::move(op->done), message = cat("connect to ", op->peer, ": ", why)] {
    done(make_error(message));
  });
}

void on_connected(uv_connect_t* req, int status) {
  std::unique_ptr<ConnectOp> op(static_cast<ConnectOp*>(req->data));
  Loop& loop = Loop::from(req->handle->loop);
  if (loop.closing()) return;  // the callers are gone
  if (status < 0) {
    guarded("connect", op->done, make_error(cat("connect to ", op->peer, ": ", uv_error(status))));
    return;
  }
  uv_tcp_nodelay(&op->handle->get()->tcp, 1);  // request/response traffic: no Nagle delays
  guarded("connect", op->done, std::make_unique<Stream>(std::move(op->handle), op->peer));
}

void start_connect(Loop& loop, std::unique_ptr<ConnectOp> op, const sockaddr_storage& addr) {
  op->handle = std::make_unique<Handle<uv_any_handle>>();
  int rc = uv_tcp_init(loop.raw(), &op->handle->get()->tcp);
  if (rc != 0) return fail_later(loop, std::move(op), uv_error(rc));
  op->handle->initialised(nullptr);
  op->req.connect.data = op.get();
  rc = uv_tcp_connect(&op->req.connect, &op->handle->get()->tcp,
                      reinterpret_cast<const sockaddr*>(&addr), on_connected);
  if (rc != 0) return fail_later(loop, std::move(op), uv_error(rc));
  op.release();  // owned by the pending request now
}

void on_resolved(uv_getaddrinfo_t* req, int status, addrinfo* res) {
  std::unique_ptr<ConnectOp> op(static_cast<ConnectOp*>(req->data));
  Loop& loop = Loop::from(req->loop);
  sockaddr_storage addr{};
  bool found = status == 0 && res && res->ai_addrlen <= sizeof addr;
  if (found) std::memcpy(&addr, res->ai_addr, res->ai_addrlen);
  uv_freeaddrinfo(res);
  if (loop.closing()) return;
  if (!found) {
    guarded("connect", op->done,
            make_error(cat("connect to ", op->peer, ": cannot resolve: ", uv_error(status))));
    return;
  }
  set_port(addr, op->port);
  start_connect(loop, std::move(op), addr);
}

}  // namespace

void connect_tcp(Loop& loop, const std::string& host, int port, ConnectFn done) {
  auto op = std::make_unique<ConnectOp>();
  op->port = port;
  op->peer = cat(host, ':', port);
  op->done = std::move(done);
  if (port < 0 || port > 65535) return fail_later(loop, std::move(op), "port out of range");
  if (auto addr = numeric_address(host, port)) return start_connect(loop, std::move(op), *addr);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  op->req.resolve.data = op.get();
  int rc = uv_getaddrinfo(loop.raw(), &op->req.resolve, on_resolved, host.c_str(), nullptr, &hints);
  if (rc != 0) return fail_later(loop, std::move(op), cat("cannot resolve: ", uv_error(rc)));
  op.release();  // owned by the pending request now
}

}  // namespace lattice::net
