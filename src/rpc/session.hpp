// A request/response conversation with one peer over a ByteTransport: frames in and out, calls
// matched to responses by request id, deadlines, and a peer that breaks the rules disconnected
// (reported once through on_error). No I/O and no clock: the owner feeds bytes and the time.
#pragma once

#include <capnp/message.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "lattice.capnp.h"
#include "rpc/framing.hpp"
#include "rpc/limits.hpp"
#include "rpc/outgoing.hpp"
#include "rpc/pending_calls.hpp"
#include "rpc/transport.hpp"

namespace lattice::rpc {

// Re-entrancy: every handler and callback may call any method of the session, and may destroy
// it; the session then stops at once without touching itself again. Pending calls of a destroyed
// session are dropped uncalled (call fail_all() first when their owners must hear of it).
// `msg` as a notification frame (requestId 0), for Session::send_encoded.
Result<std::string> encode_notification(Outgoing& msg,
                                        uint64_t max_message_bytes = kMaxMessageBytes);

class Session {
 public:
  struct Handlers {
    // A request or notification arrived; request_id 0 = notification. Readers are valid only
    // during the call. Without this handler, requests get an error response.
    std::function<void(uint64_t request_id, schema::Envelope::Reader)> on_message;
    // The byte stream is unusable (bad frame, decode error, a handler threw); the session has
    // closed the transport. Pending calls fail right after, with "connection closed: <reason>".
    std::function<void(const std::string& reason)> on_error;
  };
  // Error texts: the peer's error, "timed out waiting for the response to request N",
  // "connection closed: ...", or the reason given to fail_all().
  using ResponseCallback = rpc::ResponseCallback;

  Session(ByteTransport& transport, Handlers handlers, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Feeds bytes from the transport; dispatches every complete message. Never throws.
  void receive(std::string_view bytes);
  // Sends a request and returns its id. On a closed session, or a message over the size limit,
  // `cb` runs with the error before call() returns, and the id is 0.
  uint64_t call(Outgoing msg, uint64_t deadline_ms, ResponseCallback cb);
  void notify(Outgoing msg);  // requestId 0
  // A frame already encoded (encode_notification) for several sessions: the same fence chunk
  // to every child costs one encoding, not one per child. Dropped once the session is closed.
  void send_encoded(std::string frame);
  // isResponse=true. A response over the size limit is replaced by an error response.
  void respond(uint64_t request_id, Outgoing msg);
  void respond_error(uint64_t request_id, std::string message);
  // Fails the calls whose deadline is at or before now_ms.
  void expire(uint64_t now_ms);
  // The connection is lost: fails every pending call with `reason` and closes the session, so
  // later calls fail at once with it and sends are dropped.
  void fail_all(const std::string& reason);
  size_t pending() const { return pending_.size(); }
  bool closed() const { return closed_reason_.has_value(); }
  // Messages of any kind that arrived on this session: proof that the peer's loop runs.
  uint64_t received() const { return received_; }

 private:
  // What outlives the session while one of its handlers runs: the handlers themselves (so a
  // closure is not destroyed under its own feet) and whether the session still exists.
  struct Shared {
    Handlers handlers;
    bool alive = true;
  };
  enum class Flow { more, stop, gone };

  Flow drain(std::string_view input, Shared& shared);
  Flow dispatch(kj::ArrayPtr<const capnp::word> words, Shared& shared);
  // Completes the waiting call, if any. The text of a malformed response (after its callback
  // has heard of it): the connection must then be rejected.
  std::optional<std::string> deliver_response(uint64_t request_id,
                                              schema::Envelope::Reader envelope);
  Flow reject(const std::string& reason, Shared& shared);
  Status send(Outgoing& msg);
  Status send_response(uint64_t request_id, Outgoing& msg);

  ByteTransport& transport_;
  MessageCounts* counts_;
  std::shared_ptr<Shared> shared_;
  capnp::ReaderOptions reader_options_;
  uint64_t traversal_per_word_;  // the traversal budget grows with the message's size
  uint64_t max_message_bytes_;
  FrameDecoder decoder_;
  PendingCalls pending_;
  std::optional<std::string> closed_reason_;  // what calls on a closed session fail with
  bool receiving_ = false;
  uint64_t received_ = 0;
  std::string backlog_;  // bytes that arrived through a nested receive() while dispatching
};

}  // namespace lattice::rpc
