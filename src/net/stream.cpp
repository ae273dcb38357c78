// Stream: reads into the loop's one read buffer (Loop::read_buffer: it outlives any Stream, so the
// owner may destroy the Stream mid-callback without freeing the bytes under its feet); writes
// own their bytes until libuv is done with them.
#include "net/stream.hpp"

#include <uv.h>

#include <algorithm>
#include <utility>

#include "base/strings.hpp"
#include "net/detail/handle.hpp"

namespace lattice::net {
namespace {

// A write in flight: the request and the bytes it points into, freed together.
struct WriteReq {
  uv_write_t req;
  std::vector<std::string> parts;
  size_t bytes = 0;
};

// libuv buffers over `count` strings (uv_write copies the array, so it may be temporary).
std::vector<uv_buf_t> buffers(std::string* parts, size_t count) {
  std::vector<uv_buf_t> bufs(count);
  for (size_t i = 0; i < count; ++i)
    bufs[i] = uv_buf_init(parts[i].data(), static_cast<unsigned>(parts[i].size()));
  return bufs;
}

Error write_error(int code) {
  return make_error(cat("write: ", uv_error(code)),
                    code == UV_EPIPE ? ErrorKind::no_reader : ErrorKind::other);
}

// The streams holding writes while a callback runs (stream.hpp). A loop runs on one thread;
// thread_local keeps loops of different threads (tests) apart.
struct HeldWrites {
  int depth = 0;  // callbacks running (nested: a callback that runs another's, such as a close)
  std::vector<Stream*> streams;
};
thread_local HeldWrites held_writes;

}  // namespace

void hold_writes() noexcept { ++held_writes.depth; }

void release_writes() noexcept {
  if (--held_writes.depth == 0) Stream::send_held();
}

struct Stream::Io {
  static void on_alloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf);
  static void on_written(uv_write_t* req, int status);
};

// Sending runs no callback (failures are reported from the loop), so the list neither changes
// nor loses a stream while it is walked; it keeps its capacity for the next callback.
void Stream::send_held() noexcept {
  for (Stream* stream : held_writes.streams) stream->send_held_bytes();
  held_writes.streams.clear();
}

Result<std::unique_ptr<Stream>> Stream::open_fd(Loop& loop, UniqueFd fd, std::string peer) {
  auto handle = std::make_unique<Handle<uv_any_handle>>();
  int rc = uv_pipe_init(loop.raw(), &handle->get()->pipe, 0);
  if (rc != 0) return make_error(cat("uv_pipe_init: ", uv_error(rc)));
  handle->initialised(nullptr);
  int raw_fd = fd.get();
  rc = uv_pipe_open(&handle->get()->pipe, raw_fd);
  if (rc != 0) return make_error(cat("uv_pipe_open(", raw_fd, "): ", uv_error(rc)));
  fd.release();  // the handle owns it now and closes it
  return std::make_unique<Stream>(std::move(handle),
                                  peer.empty() ? cat("fd ", raw_fd) : std::move(peer));
}

Stream::Stream(std::unique_ptr<Handle<uv_any_handle>> handle, std::string peer)
    : handle_(std::move(handle)), peer_(std::move(peer)), self_(std::make_shared<Stream*>(this)) {
  handle_->set_owner(this);
}

Stream::~Stream() { close(); }

void Stream::start(ReadFn on_read_fn, CloseFn on_close_fn) {
  if (finished_) return;
  callbacks_ =
      std::make_shared<Callbacks>(Callbacks{std::move(on_read_fn), std::move(on_close_fn)});
  int rc = uv_read_start(raw(), Io::on_alloc, Io::on_read);
  if (rc != 0) finish_later(make_error(cat("read: ", uv_error(rc))), false);
}

void Stream::watch_writes(CloseFn on_close_fn) {
  if (finished_) return;
  callbacks_ = std::make_shared<Callbacks>(Callbacks{nullptr, std::move(on_close_fn)});
}

void Stream::Io::on_alloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  auto* self = owner_of<Stream>(h);
  if (!self) {
    *buf = uv_buf_init(nullptr, 0);  // libuv reports UV_ENOBUFS, which on_read ignores
    return;
  }
  // One read's worth: a PMI frame or rpc chunk larger than this arrives in pieces, and a
  // chatty rank costs at most this much per read callback.
  *buf =
      uv_buf_init(Loop::from(h->loop).read_buffer(), static_cast<unsigned>(Loop::kReadBufferBytes));
}

void Stream::Io::on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* self = owner_of<Stream>(s);
  if (!self || n == 0 || self->finished_) return;
  if (n < 0) {
    self->finish(n == UV_EOF ? make_error("eof", ErrorKind::eof)
                             : make_error(cat("read: ", uv_error(static_cast<int>(n)))),
                 false);
    return;
  }
  // The callbacks leave the Stream for the call: the owner may destroy it meanwhile.
  auto callbacks = self->callbacks_;
  guarded("read", callbacks->on_read, std::string_view(buf->base, static_cast<size_t>(n)));
}

void Stream::write(std::string bytes) {
  if (finished_ || ending_ || failing_ || bytes.empty()) return;
  const size_t pending = queued_ + held_bytes_;
  if (write_limit_ > 0 && bytes.size() > write_limit_ - std::min(pending, write_limit_)) {
    // A peer that stops reading would otherwise grow the queue without bound. Closing frees
    // what is stuck in it; the owner hears why from the close callback.
    finish_later(make_error(cat("write: the peer is not reading (", pending,
                                " bytes queued, limit ", write_limit_, ")")),
                 true);
    return;
  }
  if (held_writes.depth > 0) {
    if (held_.empty()) held_writes.streams.push_back(this);
    held_bytes_ += bytes.size();
    held_.push_back(std::move(bytes));
    return;
  }
  send(&bytes, 1);
}

void Stream::flush_held() {
  if (held_.empty()) return;
  auto& streams = held_writes.streams;
  streams.erase(std::remove(streams.begin(), streams.end(), this), streams.end());
  send_held_bytes();
}

void Stream::send_held_bytes() {
  if (!finished_ && !failing_) send(held_.data(), held_.size());
  held_.clear();  // moved from, or dropped; the capacity stays for the next callback
  held_bytes_ = 0;
}

void Stream::send(std::string* parts, size_t count) {
  size_t sent = 0;  // parts wholly written
  if (queued_ == 0) {
    // Nothing waiting: straight to the socket. A PMI reply then costs one write(), without a
    // write request, its callback on the next turn and the epoll changes libuv makes for it.
    uv_buf_t one;
    std::vector<uv_buf_t> many;
    if (count == 1)
      one = uv_buf_init(parts[0].data(), static_cast<unsigned>(parts[0].size()));
    else
      many = buffers(parts, count);
    int written =
        uv_try_write(raw(), count == 1 ? &one : many.data(), static_cast<unsigned>(count));
    if (written < 0 && written != UV_EAGAIN) {
      finish_later(write_error(written), false);
      return;
    }
    size_t left = written > 0 ? static_cast<size_t>(written) : 0;
    for (; sent < count && left >= parts[sent].size(); ++sent) left -= parts[sent].size();
    if (sent == count) return;
    parts[sent].erase(0, left);
  }
  auto* w = new WriteReq{};
  for (size_t i = sent; i < count; ++i) {
    w->bytes += parts[i].size();
    w->parts.push_back(std::move(parts[i]));
  }
  w->req.data = w;
  std::vector<uv_buf_t> bufs = buffers(w->parts.data(), w->parts.size());
  int rc =
      uv_write(&w->req, raw(), bufs.data(), static_cast<unsigned>(bufs.size()), Io::on_written);
  if (rc != 0) {
    delete w;
    finish_later(write_error(rc), false);
    return;
  }
  queued_ += w->bytes;
}

void Stream::Io::on_written(uv_write_t* req, int status) {
  std::unique_ptr<WriteReq> w(static_cast<WriteReq*>(req->data));
  auto* self = owner_of<Stream>(req->handle);  // null once the owner has closed the stream
  if (!self) return;
  self->queued_ -= w->bytes;
  if (status < 0) return self->finish(write_error(status), false);
  if (self->queued_ == 0 && self->on_drained_) {
    auto drained = std::move(self->on_drained_);
    self->on_drained_ = nullptr;
    guarded("drained", drained);
    self = owner_of<Stream>(req->handle);  // the callback may have closed the stream
    if (!self) return;
  }
  // A failure already on its way (e.g. the write limit) keeps its own reason.
  if (self->ending_ && self->queued_ == 0 && !self->failing_)
    self->finish(make_error("closed after writing"), true);
}

void Stream::pause_reading() {
  if (finished_ || paused_ || !callbacks_ || !callbacks_->on_read) return;  // not reading
  paused_ = true;
  uv_read_stop(raw());
}

void Stream::resume_reading() {
  if (finished_ || !paused_) return;
  paused_ = false;
  int rc = uv_read_start(raw(), Io::on_alloc, Io::on_read);
  if (rc != 0) finish_later(make_error(cat("read: ", uv_error(rc))), false);
}

void Stream::when_drained(std::function<void()> fn) {
  flush_held();  // "drained" means sent: held bytes go now
  if (queued_ > 0 && !finished_) {
    on_drained_ = std::move(fn);
    return;
  }
  on_drained_ = nullptr;
  Loop::from(handle_->base()->loop).defer([alive = self_, fn = std::move(fn)] {
    if (*alive) guarded("drained", fn);
  });
}

void Stream::end(std::string bytes) {
  if (ending_) return;
  write(std::move(bytes));  // dropped when the stream has ended already
  flush_held();             // everything written goes before the end, now
  ending_ = true;
  if (queued_ > 0) return;  // on_written closes once the queue drains
  if (finished_)
    close();
  else
    finish_later(make_error("closed after writing"), true);
}

void Stream::finish(const Error& why, bool close_handle) {
  auto callbacks = finished_ ? nullptr : callbacks_;
  finished_ = true;
  // Nothing more will be written: whoever waits for the queue to drain may go on.
  if (on_drained_)
    Loop::from(handle_->base()->loop)
        .defer([alive = self_, fn = std::exchange(on_drained_, nullptr)] {
          if (*alive) guarded("drained", fn);
        });
  if (close_handle)
    close();
  else
    uv_read_stop(raw());
  if (callbacks && callbacks->on_close) guarded("close", callbacks->on_close, why);
}

void Stream::finish_later(Error why, bool close_handle) {
  failing_ = true;
  Loop::from(handle_->base()->loop).defer([alive = self_, why = std::move(why), close_handle] {
    if (*alive) (*alive)->finish(why, close_handle);
  });
}

uv_stream_t* Stream::raw() const { return handle_->stream(); }

int Stream::fd() const {
  if (!handle_ || !handle_->live()) return -1;
  uv_os_fd_t fd = -1;
  return uv_fileno(handle_->base(), &fd) == 0 ? fd : -1;
}

void Stream::close() {
  // Held bytes get what write() would have given them: whatever the socket takes now (a
  // connection's final record before it closes, say). The rest is dropped with the queue.
  flush_held();
  finished_ = true;
  queued_ = 0;
  callbacks_.reset();
  if (self_) *self_ = nullptr;
  if (handle_) handle_->close();  // pending writes complete with UV_ECANCELED, without an owner
}

}  // namespace lattice::net
