#include "link/connection.hpp"

#include "base/log.hpp"

namespace lattice::link {

Connection::Connection(std::unique_ptr<net::Stream> stream, rpc::Session::Handlers handlers,
                       ClosedFn on_closed)
    : stream_(std::move(stream)),
      peer_(stream_->peer()),
      on_closed_(std::move(on_closed)),
      session_(*this, [&] {
        auto user_error = handlers.on_error;
        handlers.on_error = [this, user_error](const std::string& reason) {
          LAT_LOG(warn, "rpc", "peer ", peer_, ": ", reason);
          if (user_error) user_error(reason);
          closed(reason);
        };
        return handlers;
      }()) {
  stream_->start([this](std::string_view bytes) { session_.receive(bytes); },
                 [this](const std::string& reason) { closed(reason); });
}

Connection::~Connection() { close(); }

void Connection::write(std::string bytes) {
  if (open_) stream_->write(std::move(bytes));
}

void Connection::close() {
  // Stops I/O only; whoever closes knows why. A session that rejects its peer closes through
  // here and then reports the reason through on_error, which lands in closed().
  open_ = false;
  stream_->close();
}

void Connection::closed(const std::string& reason) {
  if (reported_) return;
  reported_ = true;
  open_ = false;
  stream_->close();
  session_.fail_all("connection closed: " + reason);
  if (on_closed_) on_closed_(reason);
}

}  // namespace lattice::link
