#include "agent/exec_door.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.hpp"
#include "base/log_limiter.hpp"
#include "net/peer_credentials.hpp"
#include "rpc/session.hpp"
#include "rpc/transport.hpp"
#include "secure/secret.hpp"

namespace lattice::agent {
namespace {

// A request is one small message: an orted or hydra_pmi_proxy command line is a few KiB.
constexpr uint64_t kMaxRequestBytes = 256 * 1024;
// A client that connected must ask within this long.
constexpr uint64_t kRequestDeadlineMs = 10000;
// Commands in flight per launch and node: far beyond one proxy per node and a tree spawn.
constexpr size_t kMaxClients = 256;
// Output the client may leave unread before it is cut off.
constexpr size_t kClientWriteLimit = size_t{16} << 20;

// An rpc session's bytes on a plain local stream (the socket is the job user's own).
class StreamTransport : public rpc::ByteTransport {
 public:
  explicit StreamTransport(net::Stream& stream) : stream_(stream) {}
  void write(std::string bytes) override { stream_.write(std::move(bytes)); }
  void close() override { stream_.close(); }

 private:
  net::Stream& stream_;
};

}  // namespace

struct ExecDoor::Client {
  std::unique_ptr<net::Stream> stream;
  std::unique_ptr<StreamTransport> transport;
  std::unique_ptr<rpc::Session> session;
  uint64_t connected_ms = 0;
  bool asked = false;
  bool finished = false;  // the exit went out; the stream closes once it is written
};

ExecDoor::ExecDoor(net::Loop& loop, uint32_t uid, std::string token, Hooks hooks)
    : loop_(loop),
      uid_(uid),
      token_(std::move(token)),
      hooks_(std::move(hooks)),
      reaper_(loop),
      sweeper_(loop) {}

ExecDoor::~ExecDoor() = default;

Result<std::unique_ptr<ExecDoor>> ExecDoor::open(net::Loop& loop, const std::string& path,
                                                 uint32_t uid, std::string token, Hooks hooks) {
  std::unique_ptr<ExecDoor> door(new ExecDoor(loop, uid, std::move(token), std::move(hooks)));
  ExecDoor* self = door.get();
  auto listener = net::UnixListener::listen(
      loop, path, [self](auto stream) { self->admit(std::move(stream)); });
  if (!listener) return make_error(cat("exec socket ", path, ": ", listener.error().message));
  door->listener_ = std::move(listener.value());
  // Clients that never ask are cut off; checked at a coarse period, which is all it needs.
  door->sweeper_.start(kRequestDeadlineMs, kRequestDeadlineMs, [self] {
    uint64_t now = self->loop_.now_ms();
    std::vector<uint64_t> late;
    for (auto& [id, client] : self->clients_)
      if (!client->asked && now - client->connected_ms >= kRequestDeadlineMs) late.push_back(id);
    for (uint64_t id : late) self->drop(id);
  });
  return door;
}

void ExecDoor::admit(std::unique_ptr<net::Stream> stream) {
  auto cred = net::peer_credentials(*stream);
  if (!cred || (cred->uid != uid_ && cred->uid != 0)) {
    LAT_LOG_LIMITED(refusals_, warn, "auth", "other user", "refused an exec request on ", path(),
                    " from ", cred ? cat("uid ", cred->uid) : std::string("an unknown peer"),
                    " (the job runs as uid ", uid_, ")",
                    log_fields({{"uid", cred ? cat(cred->uid) : std::string("-")}}));
    return;
  }
  if (clients_.size() >= kMaxClients) {
    LAT_LOG_LIMITED(refusals_, warn, "exec", "full", "refused an exec request on ", path(), ": ",
                    kMaxClients, " commands are running already");
    return;
  }
  uint64_t id = next_id_++;
  auto client = std::make_unique<Client>();
  client->stream = std::move(stream);
  client->stream->set_write_limit(kClientWriteLimit);
  client->transport = std::make_unique<StreamTransport>(*client->stream);
  client->connected_ms = loop_.now_ms();
  rpc::Session::Handlers handlers;
  handlers.on_message = [this, id](uint64_t, schema::Envelope::Reader envelope) {
    auto body = envelope.getBody();
    if (body.which() != schema::Envelope::Body::EXEC_REQUEST) return drop(id);
    request(id, wire::decode_exec_request(body.getExecRequest()));
  };
  handlers.on_error = [this, id](const std::string& reason) {
    LAT_LOG(debug, "exec", "exec client ", id, ": ", reason);
    drop(id);
  };
  rpc::SessionOptions options;
  options.max_message_bytes = kMaxRequestBytes;
  client->session = std::make_unique<rpc::Session>(*client->transport, handlers, options);
  Client* raw = client.get();
  clients_[id] = std::move(client);
  raw->stream->start([raw](std::string_view bytes) { raw->session->receive(bytes); },
                     [this, id](const Error&) { drop(id); });
}

void ExecDoor::request(uint64_t id, wire::ExecRequest request) {
  auto it = clients_.find(id);
  if (it == clients_.end() || it->second->asked) return drop(id);  // one request only
  it->second->asked = true;
  bool token_ok = request.token.size() == token_.size() &&
                  secure::equal(reinterpret_cast<const uint8_t*>(request.token.data()),
                                reinterpret_cast<const uint8_t*>(token_.data()), token_.size());
  Status started = token_ok ? hooks_.start(id, std::move(request))
                            : Status(make_error("refused: not this launch's token "
                                                "(LATTICE_EXEC_TOKEN)"));
  if (started) return;
  if (!token_ok)
    LAT_LOG_LIMITED(refusals_, warn, "auth", "wrong token", "refused an exec request on ", path(),
                    ": wrong token");
  wire::ExecEvent refusal;
  refusal.exited = true;
  refusal.error = started.error().message;
  send(id, refusal);
}

void ExecDoor::send(uint64_t id, const wire::ExecEvent& event) {
  auto it = clients_.find(id);
  if (it == clients_.end() || it->second->finished) return;
  it->second->session->notify(wire::exec_event(event));
  if (!event.exited) return;
  // The client reads to EOF after the last event; the close that follows the flush drops it.
  it->second->finished = true;
  it->second->stream->end({});
}

void ExecDoor::drop(uint64_t id) {
  auto it = clients_.find(id);
  if (it == clients_.end()) return;
  bool waiting = it->second->asked && !it->second->finished;
  it->second->stream->close();
  closed_.push_back(std::move(it->second));
  clients_.erase(it);
  reaper_.start(0, 0, [this] { closed_.clear(); });
  if (waiting) hooks_.gone(id);
}

}  // namespace lattice::agent
