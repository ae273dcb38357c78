// A sealed rpc link over one net::Stream: the libsodium handshake first (secure::Channel), then
// every rpc frame travels in sealed records. The rpc::Session above sees only plaintext through
// the ByteTransport seam and never knows the bytes are sealed. Used by the agent (launcher and
// peer connections, as responder and initiator) and by the launcher (as initiator).
// Nothing reaches the session before the peer has proved it holds the cluster key; the peer's
// identity (role and name) comes from the handshake and is what owners authorise against.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "net/loop.hpp"
#include "net/stream.hpp"
#include "net/timer.hpp"
#include "rpc/session.hpp"
#include "secure/channel.hpp"

namespace lattice::link {

// How long a peer may take to complete the handshake before it is dropped: a silent or slow
// client costs one socket for this long and at most kMaxHandshakeMessage bytes.
constexpr uint64_t kDefaultHandshakeTimeoutMs = 5000;
// Outgoing bytes a peer may leave unread before it is dropped: enough for a large fence store
// in flight to a slow but live peer.
constexpr size_t kDefaultWriteLimitBytes = size_t{256} << 20;
// A local link's peer (a user on the agent's door) proved no key, and carries no fence stores:
// its messages are bounded by a launch request with the largest environment execve takes
// (2 MiB), and what it leaves unread by far more than the output the agent holds for it (its
// launches' ranks are held back at 1 MiB).
constexpr uint64_t kLocalMessageBytes = uint64_t{4} << 20;
constexpr size_t kLocalWriteLimitBytes = size_t{16} << 20;

// Bytes on the network of an owner's sealed links (handshakes and records), for its metrics.
struct SealedBytes {
  uint64_t sent = 0, received = 0;
};

struct LinkOptions {
  secure::Channel::Side side = secure::Channel::Side::responder;
  const secure::Credentials* credentials = nullptr;  // must outlive the connection
  secure::Identity self;
  // An initiator's key pair shared with the owner's other links (secure/ephemeral_key.hpp);
  // null: the handshake makes its own.
  std::shared_ptr<const secure::EphemeralKey> ephemeral;
  uint64_t handshake_timeout_ms = kDefaultHandshakeTimeoutMs;
  size_t write_limit_bytes = kDefaultWriteLimitBytes;
  rpc::MessageCounts* counts = nullptr;  // the owner's tally; must outlive the connection
  SealedBytes* sealed = nullptr;         // likewise
  // A local link (a Unix socket, the agent's user door): no handshake and no seal, the peer
  // being who the kernel says (SO_PEERCRED), checked by the owner before it makes the link.
  // Set: `side`, `credentials` and `self` are unused.
  std::optional<secure::Identity> local_peer;
};

class Connection : public rpc::ByteTransport {
 public:
  using ClosedFn = std::function<void(const Error& why)>;
  using EstablishedFn = std::function<void(const secure::Identity& peer)>;

  // Starts the handshake at once. `on_established` runs once the peer is authenticated (the
  // session may be used before: what it sends waits until then). `on_closed` runs once, when
  // the link fails (handshake refused or timed out, bad record, EOF, a session error); pending
  // calls have failed by then. Neither callback may destroy this Connection synchronously.
  Connection(net::Loop& loop, std::unique_ptr<net::Stream> stream, LinkOptions options,
             rpc::Session::Handlers handlers, EstablishedFn on_established, ClosedFn on_closed);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  rpc::Session& session() { return session_; }
  bool open() const { return open_; }
  bool established() const { return !channel_ || channel_->established(); }
  // The authenticated peer; meaningful once established().
  const secure::Identity& identity() const { return channel_ ? channel_->peer() : local_peer_; }
  bool local() const { return !channel_; }
  // The peer's certified static key (none on a local door link, or without an authority).
  std::optional<secure::StaticKey> certified_key() const {
    return channel_ ? channel_->certified_key() : std::nullopt;
  }
  const std::string& peer() const { return peer_; }  // its address, for logs
  // Why the link ended before its peer authenticated, as a metrics cause: the handshake's
  // refusal (secure::refusal_name), "timeout", or "closed" (the peer left, or broke off); ""
  // while open, once established, and when the owner closed it.
  std::string_view refusal() const { return refusal_; }
  uint64_t last_activity_ms() const { return last_activity_ms_; }
  // Sealed bytes waiting for the socket (the peer is reading slower than we write), and a
  // one-shot call for when none are left (net::Stream::when_drained).
  size_t write_queue_bytes() const { return stream_->write_queue_bytes(); }
  void when_drained(std::function<void()> fn) { stream_->when_drained(std::move(fn)); }
  // Backpressure on the peer (net::Stream::pause_reading): nothing it sends is read meanwhile.
  void pause_reading() { stream_->pause_reading(); }
  void resume_reading() { stream_->resume_reading(); }

  void write(std::string bytes) override;
  // Ends the link: a final record (so the peer can tell a clean close from a cut stream), then
  // the socket closes. No callback runs afterwards.
  void close() override;

 private:
  void on_bytes(std::string_view bytes);
  void closed(const Error& why);
  void send(std::string sealed);  // to the network, counted

  net::Loop& loop_;
  std::unique_ptr<net::Stream> stream_;
  std::string peer_;
  std::unique_ptr<secure::Channel> channel_;  // null: a local link
  secure::Identity local_peer_;
  net::Timer handshake_timer_;
  EstablishedFn on_established_;
  ClosedFn on_closed_;
  std::string unsent_;  // plaintext written before the handshake completed
  uint64_t last_activity_ms_;
  size_t write_limit_;
  bool open_ = true;
  bool reported_ = false;
  bool timed_out_ = false;
  bool initiator_ = false;
  bool heard_records_ = false;  // the peer sent something after the handshake
  const char* refusal_ = "";
  SealedBytes* sealed_;
  rpc::Session session_;
};

}  // namespace lattice::link
