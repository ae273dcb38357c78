// A connected byte stream (TCP or Unix/pipe) on the loop: reads delivered as they come, writes
// queued. EOF or an error ends the stream once, through the close callback. The owner may
// destroy the Stream from inside its own callbacks.
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "net/fd.hpp"
#include "net/handle.hpp"
#include "net/loop.hpp"

namespace lattice::net {

class Stream {
 public:
  using ReadFn = std::function<void(std::string_view bytes)>;
  using CloseFn = std::function<void(const std::string& reason)>;  // "eof" or the error; once

  // Wraps an existing connected socket or pipe fd (the parent's end of a socketpair, a pipe).
  static Result<std::unique_ptr<Stream>> open_fd(Loop& loop, UniqueFd fd);

  // Takes an initialised uv_tcp_t/uv_pipe_t (listeners and connect use this).
  Stream(std::unique_ptr<Handle<uv_any_handle>> handle, std::string peer);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void start(ReadFn on_read, CloseFn on_close);
  void write(std::string bytes);
  // Writes `bytes`, then closes once everything queued has been written.
  void end(std::string bytes);
  void close();  // idempotent; no callbacks afterwards
  size_t write_queue_bytes() const { return queued_; }
  const std::string& peer() const { return peer_; }
  uv_stream_t* raw() const { return reinterpret_cast<uv_stream_t*>(handle_->get()); }

 private:
  struct Callbacks {
    ReadFn on_read;
    CloseFn on_close;
  };
  static void on_alloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf);
  void finish(const std::string& reason);

  std::unique_ptr<Handle<uv_any_handle>> handle_;
  std::string peer_;
  std::shared_ptr<Callbacks> callbacks_;
  std::string read_buffer_;
  size_t queued_ = 0;
  bool closing_after_writes_ = false;
  bool finished_ = false;
};

}  // namespace lattice::net
