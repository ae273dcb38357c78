#include "net/stream.hpp"

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::net {
namespace {

// One read's worth of buffer; a PMI frame or rpc chunk larger than this arrives in pieces.
constexpr size_t kReadBufferBytes = 64 * 1024;

// A write in flight: the request and the bytes it points into, freed together.
struct WriteReq {
  uv_write_t req;
  std::string bytes;
  Stream* owner;  // cleared when the owner closes (see Stream::close)
};

}  // namespace

Result<std::unique_ptr<Stream>> Stream::open_fd(Loop& loop, UniqueFd fd) {
  auto handle = std::make_unique<Handle<uv_any_handle>>();
  auto* pipe = reinterpret_cast<uv_pipe_t*>(handle->get());
  int rc = uv_pipe_init(loop.raw(), pipe, 0);
  if (rc != 0) return make_error(cat("uv_pipe_init: ", uv_error(rc)));
  handle->initialised(nullptr);
  rc = uv_pipe_open(pipe, fd.get());
  if (rc != 0) return make_error(cat("uv_pipe_open: ", uv_error(rc)));
  fd.release();  // the handle owns it now
  return std::make_unique<Stream>(std::move(handle), "fd");
}

Stream::Stream(std::unique_ptr<Handle<uv_any_handle>> handle, std::string peer)
    : handle_(std::move(handle)), peer_(std::move(peer)) {
  handle_->get()->handle.data = this;
}

Stream::~Stream() { close(); }

void Stream::start(ReadFn on_read_fn, CloseFn on_close_fn) {
  callbacks_ = std::make_shared<Callbacks>(Callbacks{std::move(on_read_fn), std::move(on_close_fn)});
  int rc = uv_read_start(raw(), on_alloc, on_read);
  if (rc != 0) finish(cat("read: ", uv_error(rc)));
}

void Stream::on_alloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  auto* self = static_cast<Stream*>(h->data);
  if (!self) {
    *buf = uv_buf_init(nullptr, 0);
    return;
  }
  self->read_buffer_.resize(kReadBufferBytes);
  *buf = uv_buf_init(self->read_buffer_.data(), static_cast<unsigned>(self->read_buffer_.size()));
}

void Stream::on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* self = static_cast<Stream*>(s->data);
  if (!self || n == 0) return;
  if (n < 0) {
    self->finish(n == UV_EOF ? "eof" : uv_error(static_cast<int>(n)));
    return;
  }
  // Keep the callbacks alive for the call even if the owner destroys this Stream inside it.
  auto callbacks = self->callbacks_;
  try {
    callbacks->on_read(std::string_view(buf->base, static_cast<size_t>(n)));
  } catch (const std::exception& e) {
    LAT_LOG(error, "net", "read callback threw: ", e.what());
  }
}

void Stream::write(std::string bytes) {
  if (finished_ || !handle_->get() || bytes.empty()) return;
  auto* w = new WriteReq{};
  w->bytes = std::move(bytes);
  w->owner = this;
  w->req.data = w;
  queued_ += w->bytes.size();
  uv_buf_t buf = uv_buf_init(w->bytes.data(), static_cast<unsigned>(w->bytes.size()));
  int rc = uv_write(&w->req, raw(), &buf, 1, [](uv_write_t* req, int status) {
    auto* wr = static_cast<WriteReq*>(req->data);
    // The stream's data pointer tells whether the owner is still there.
    auto* self = static_cast<Stream*>(req->handle->data);
    size_t size = wr->bytes.size();
    delete wr;
    if (!self) return;
    self->queued_ -= size;
    if (status < 0) return self->finish(cat("write: ", uv_error(status)));
    if (self->closing_after_writes_ && self->queued_ == 0) self->finish("closed after writing");
  });
  if (rc != 0) {
    queued_ -= w->bytes.size();
    delete w;
    finish(cat("write: ", uv_error(rc)));
  }
}

void Stream::end(std::string bytes) {
  write(std::move(bytes));
  closing_after_writes_ = true;
  if (queued_ == 0) finish("closed after writing");
}

void Stream::finish(const std::string& reason) {
  if (finished_) return;
  finished_ = true;
  uv_read_stop(raw());
  auto callbacks = callbacks_;
  if (callbacks && callbacks->on_close) {
    try {
      callbacks->on_close(reason);
    } catch (const std::exception& e) {
      LAT_LOG(error, "net", "close callback threw: ", e.what());
    }
  }
}

void Stream::close() {
  finished_ = true;
  callbacks_.reset();
  if (handle_) handle_->close();  // pending write callbacks then see no owner
}

}  // namespace lattice::net
