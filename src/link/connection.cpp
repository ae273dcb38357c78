// Connection: stream bytes -> channel -> session, and session bytes -> channel -> stream. The
// channel's verdicts (a refused handshake, a broken record) end the link with a logged reason.
#include "link/connection.hpp"

#include <algorithm>

#include "base/log.hpp"
#include "base/wipe.hpp"

namespace lattice::link {

Connection::Connection(net::Loop& loop, std::unique_ptr<net::Stream> stream, LinkOptions options,
                       rpc::Session::Handlers handlers, EstablishedFn on_established,
                       ClosedFn on_closed)
    : loop_(loop),
      stream_(std::move(stream)),
      peer_(stream_->peer()),
      channel_(options.local_peer ? nullptr
                                  : std::make_unique<secure::Channel>(
                                        options.side, *options.credentials, std::move(options.self),
                                        std::move(options.ephemeral))),
      local_peer_(options.local_peer.value_or(secure::Identity{})),
      handshake_timer_(loop),
      on_established_(std::move(on_established)),
      on_closed_(std::move(on_closed)),
      last_activity_ms_(loop.now_ms()),
      write_limit_(options.local_peer ? std::min(options.write_limit_bytes, kLocalWriteLimitBytes)
                                      : options.write_limit_bytes),
      sealed_(options.sealed),
      session_(
          *this,
          [&] {
            auto user_error = handlers.on_error;
            handlers.on_error = [this, user_error](const std::string& reason) {
              LAT_LOG(warn, "rpc", "peer ", peer_, ": ", reason, log_fields({{"peer", peer_}}));
              if (user_error) user_error(reason);
              closed(make_error(reason));
            };
            return handlers;
          }(),
          rpc::SessionOptions{options.counts,
                              options.local_peer ? kLocalMessageBytes : rpc::kMaxMessageBytes}) {
  stream_->set_write_limit(write_limit_);
  initiator_ = options.side == secure::Channel::Side::initiator;
  if (!channel_) {
    stream_->start([this](std::string_view bytes) { on_bytes(bytes); },
                   [this](const Error& why) {
                     closed(why.kind == ErrorKind::eof
                                ? make_error("closed by the peer", ErrorKind::closed_by_peer)
                                : why);
                   });
    return;
  }
  handshake_timer_.start(options.handshake_timeout_ms, 0,
                         [this, ms = options.handshake_timeout_ms] {
                           timed_out_ = true;
                           closed(make_error(cat("no handshake within ", ms / 1000.0, " s")));
                         });
  stream_->start([this](std::string_view bytes) { on_bytes(bytes); },
                 [this](const Error& why) {
                   if (why.kind == ErrorKind::eof && channel_->peer_finished())
                     closed(make_error("closed by the peer", ErrorKind::closed_by_peer));
                   else if (why.kind == ErrorKind::eof && channel_->established() && initiator_ &&
                            !heard_records_)
                     // A responder refuses the initiator's last handshake message in silence.
                     closed(make_error(
                         "the peer closed the link as soon as the handshake ended, before "
                         "sending anything: it refused this side's identity (with certified "
                         "identities: a certificate it does not accept; its log says why)"));
                   else if (why.kind == ErrorKind::eof && channel_->established())
                     closed(make_error(
                         "the peer's stream ended without its final record (peer died or the "
                         "connection was cut)"));
                   else
                     closed(why);
                 });
  std::string hello = channel_->start();
  if (!hello.empty()) send(std::move(hello));
}

Connection::~Connection() { close(); }

void Connection::on_bytes(std::string_view bytes) {
  if (!open_) return;
  last_activity_ms_ = loop_.now_ms();
  if (!channel_) return session_.receive(bytes);
  if (sealed_) sealed_->received += bytes.size();
  heard_records_ = heard_records_ || (channel_->established() && !bytes.empty());
  secure::ChannelOutput out;
  auto status = channel_->receive(bytes, out);
  if (!out.to_network.empty()) send(std::move(out.to_network));
  if (!status) return closed(status.error());
  if (out.established) {
    handshake_timer_.stop();
    LAT_LOG(debug, "link", peer_, " is ", secure::describe(channel_->peer()), ", records under ",
            secure::cipher_name(channel_->cipher()));
    if (!unsent_.empty()) send(channel_->seal(std::exchange(unsent_, std::string())));
    if (on_established_) on_established_(channel_->peer());
    if (!open_) return;
  }
  if (!out.plaintext.empty()) session_.receive(out.plaintext);
  wipe(out.plaintext);  // a launch request's plaintext holds its CXI key
}

void Connection::write(std::string bytes) {
  if (!open_) return;
  if (!channel_) {
    stream_->write(std::move(bytes));
  } else if (channel_->established()) {
    send(channel_->seal(bytes));
    wipe(bytes);
  } else if (unsent_.size() + bytes.size() > write_limit_)
    closed(make_error(
        cat("more than ", write_limit_, " bytes queued before the handshake completed")));
  else
    unsent_ += bytes;
}

void Connection::close() {
  if (open_ && channel_ && channel_->established()) send(channel_->seal_final());
  open_ = false;
  handshake_timer_.stop();
  stream_->close();
}

void Connection::send(std::string sealed) {
  if (sealed_) sealed_->sent += sealed.size();
  stream_->write(std::move(sealed));
}

void Connection::closed(const Error& why) {
  if (reported_) return;
  reported_ = true;
  if (channel_ && !channel_->established()) {
    const char* refused = secure::refusal_name(channel_->refusal());
    refusal_ = *refused ? refused : timed_out_ ? "timeout" : "closed";
  }
  open_ = false;
  handshake_timer_.stop();
  stream_->close();
  session_.fail_all("connection closed: " + why.message);
  if (on_closed_) on_closed_(why);
}

}  // namespace lattice::link
