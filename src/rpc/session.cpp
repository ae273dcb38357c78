// Session: the receive path (frames -> envelopes -> handlers or waiting calls) and the send path.
// Caveat: every call out to the owner may destroy this session or re-enter it; code after such
// a call checks Shared::alive first and touches no member when the session is gone.
#include "rpc/session.hpp"

#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <exception>
#include <utility>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "rpc/version.hpp"

namespace lattice::rpc {
namespace {

// Runs `fn`; the text of whatever it threw, or nullopt.
template <class Fn>
std::optional<std::string> run_guarded(Fn&& fn) {
  try {
    fn();
    return std::nullopt;
  } catch (const kj::Exception& e) {
    return std::string(e.getDescription().cStr());
  } catch (const std::exception& e) {
    return std::string(e.what());
  } catch (...) {
    return std::string("unknown exception");
  }
}

// Completes a call outside the receive path, where a throwing callback is the owner's bug: it is
// logged and the next call still completes. Touches no session, which may be gone by now.
void complete(const ResponseCallback& callback, Error error) {
  auto thrown = run_guarded([&] { callback(std::move(error)); });
  if (thrown) LAT_LOG(error, "rpc", "a response callback threw: ", *thrown);
}

}  // namespace

Session::Session(ByteTransport& transport, Handlers handlers, SessionOptions options)
    : transport_(transport),
      counts_(options.counts),
      shared_(std::make_shared<Shared>(Shared{std::move(handlers), true})),
      traversal_per_word_(options.traversal_words_per_message_word),
      max_message_bytes_(options.max_message_bytes),
      decoder_(options.max_message_bytes) {
  reader_options_.traversalLimitInWords = options.traversal_limit_words;
  reader_options_.nestingLimit = options.nesting_limit;
}

Session::~Session() { shared_->alive = false; }

void Session::receive(std::string_view bytes) {
  if (closed_reason_) return;
  if (receiving_) {  // a handler's write looped back to us: dispatch after the current message
    backlog_.append(bytes);
    return;
  }
  std::shared_ptr<Shared> shared = shared_;
  receiving_ = true;
  Flow flow = drain(bytes, *shared);
  std::string chunk;
  while (flow == Flow::more && !backlog_.empty()) {
    chunk = std::exchange(backlog_, std::string());
    flow = drain(chunk, *shared);
  }
  if (flow == Flow::gone) return;
  receiving_ = false;
  backlog_.clear();
}

Session::Flow Session::drain(std::string_view input, Shared& shared) {
  while (true) {
    auto frame = decoder_.next(input);
    if (!frame) return reject(frame.error().message, shared);
    if (frame->size() == 0) return Flow::more;
    Flow flow = dispatch(*frame, shared);
    if (flow != Flow::more) return flow;
  }
}

Session::Flow Session::dispatch(kj::ArrayPtr<const capnp::word> words, Shared& shared) {
  // Readers check limits lazily: the handler's own getters may throw, so it runs inside too.
  std::optional<std::string> malformed;
  std::string refused;  // the peer's version is too far from ours
  // Traversal is bounded by this message's own size too, so a small message cannot buy reads
  // (zero-sized list elements) out of the budget meant for the largest one.
  ++received_;
  if (counts_) ++counts_->received;
  capnp::ReaderOptions options = reader_options_;
  options.traversalLimitInWords =
      std::min<uint64_t>(options.traversalLimitInWords, traversal_per_word_ * words.size());
  auto thrown = run_guarded([&] {
    capnp::FlatArrayMessageReader reader(words, options);
    auto envelope = reader.getRoot<schema::Envelope>();
    uint64_t request_id = envelope.getRequestId();
    refused = version_refusal(envelope.getVersion());
    if (!refused.empty()) {
      // Said to the peer too, which may not check versions itself (release 0.1.0 does not).
      if (!envelope.getIsResponse() && request_id != 0)
        respond_error(request_id, version_answer(envelope.getVersion()));
    } else if (envelope.getIsResponse())
      malformed = deliver_response(request_id, envelope);
    else if (shared.handlers.on_message)
      shared.handlers.on_message(request_id, envelope);
    else if (request_id != 0)
      respond_error(request_id, "no requests are served on this connection");
  });
  if (!shared.alive) return Flow::gone;
  if (thrown) return reject(cat("cannot handle a message: ", *thrown), shared);
  if (malformed) return reject(cat("cannot handle a message: ", *malformed), shared);
  if (!refused.empty()) return reject(refused, shared);
  return closed_reason_ ? Flow::stop : Flow::more;
}

std::optional<std::string> Session::deliver_response(uint64_t request_id,
                                                     schema::Envelope::Reader envelope) {
  auto callback = pending_.take(request_id);
  if (!callback) {
    LAT_LOG(debug, "rpc", "dropped a response to unknown request ", request_id);
    return std::nullopt;
  }
  // The callback is ours alone now: whatever the error field holds, it completes exactly once.
  // Readers check pointers lazily, so a malformed field throws here rather than at parse time.
  std::optional<std::string> error;
  auto malformed = run_guarded([&] {
    auto text = envelope.getError();
    if (text.size() > 0) error = std::string(text.begin(), text.size());
  });
  if (malformed) {
    // The session may be gone once the callback returns: the reason travels by value.
    std::string reason = cat("malformed response to request ", request_id, ": ", *malformed);
    (*callback)(make_error(reason));
    return reason;
  }
  if (error)
    (*callback)(make_error(std::move(*error), ErrorKind::refused));
  else
    (*callback)(envelope);
  return std::nullopt;
}

Session::Flow Session::reject(const std::string& reason, Shared& shared) {
  LAT_LOG(debug, "rpc", "closing the connection: ", reason);
  closed_reason_ = "connection closed: " + reason;
  transport_.close();
  if (shared.handlers.on_error) {
    auto thrown = run_guarded([&] { shared.handlers.on_error(reason); });
    if (thrown) LAT_LOG(error, "rpc", "the on_error handler threw: ", *thrown);
  }
  if (!shared.alive) return Flow::gone;
  fail_all(*closed_reason_);
  return Flow::stop;
}

uint64_t Session::call(Outgoing msg, uint64_t deadline_ms, ResponseCallback cb) {
  if (closed_reason_) {
    complete(cb, make_error(*closed_reason_));
    return 0;
  }
  // Registered before the write: a loopback peer may answer before write() returns.
  uint64_t request_id = pending_.add(deadline_ms, std::move(cb));
  auto envelope = msg.envelope();
  envelope.setRequestId(request_id);
  envelope.setIsResponse(false);
  auto frame = encode_frame(msg.message(), max_message_bytes_);
  if (!frame) {
    complete(*pending_.take(request_id), frame.error());
    return 0;
  }
  transport_.write(std::move(frame.value()));
  if (counts_) ++counts_->sent;
  return request_id;
}

Result<std::string> encode_notification(Outgoing& msg, uint64_t max_message_bytes) {
  auto envelope = msg.envelope();
  envelope.setRequestId(0);
  envelope.setIsResponse(false);
  return encode_frame(msg.message(), max_message_bytes);
}

void Session::notify(Outgoing msg) {
  auto frame = encode_notification(msg, max_message_bytes_);
  if (frame)
    send_encoded(std::move(frame.value()));
  else
    LAT_LOG(error, "rpc", "notification not sent: ", frame.error().message);
}

void Session::send_encoded(std::string frame) {
  if (closed_reason_) {
    LAT_LOG(debug, "rpc", "message dropped: ", *closed_reason_);
    return;
  }
  transport_.write(std::move(frame));
  if (counts_) ++counts_->sent;
}

void Session::respond(uint64_t request_id, Outgoing msg) {
  auto sent = send_response(request_id, msg);
  if (!sent)
    respond_error(request_id, cat("the response could not be sent: ", sent.error().message));
}

void Session::respond_error(uint64_t request_id, std::string message) {
  if (message.empty()) message = "unspecified error";
  if (message.size() > kMaxErrorTextBytes) message.resize(kMaxErrorTextBytes);
  Outgoing msg;
  msg.envelope().setError(message);
  auto sent = send_response(request_id, msg);
  if (!sent) LAT_LOG(error, "rpc", "error response not sent: ", sent.error().message);
}

Status Session::send_response(uint64_t request_id, Outgoing& msg) {
  if (request_id == 0) {
    LAT_LOG(debug, "rpc", "no response to a notification");
    return {};
  }
  auto envelope = msg.envelope();
  envelope.setRequestId(request_id);
  envelope.setIsResponse(true);
  return send(msg);
}

Status Session::send(Outgoing& msg) {
  auto frame = encode_frame(msg.message(), max_message_bytes_);
  if (!frame) return frame.error();
  send_encoded(std::move(frame.value()));
  return {};
}

void Session::expire(uint64_t now_ms) {
  for (auto& expired : pending_.take_expired(now_ms))
    complete(expired.callback,
             make_error(cat("timed out waiting for the response to request ", expired.request_id)));
}

void Session::fail_all(const std::string& reason) {
  // A copy: `reason` may live in this session, which a callback may destroy.
  std::string why = reason;
  if (!closed_reason_) closed_reason_ = why;
  for (auto& call : pending_.take_all()) complete(call.callback, make_error(why));
}

}  // namespace lattice::rpc
