// A connected byte stream (TCP, Unix socket or pipe) on the loop: reads delivered as they come,
// writes queued (optionally bounded). EOF, a read or write error, an exceeded write limit, or a
// drained end() ends the stream once, through the close callback, never from inside write() or
// start(). The owner may destroy the Stream from inside any of its callbacks; the bytes of a read
// stay valid until that callback returns.
//
// Writes made while a callback of the loop runs (a read, a timer, a child's exit: any that
// net/ calls) are held until it returns, then go out as one writev per stream: a node that
// forwards the chunks of one read to its children makes one write (and wakes each child once)
// per child, not one per chunk, and a rank's exit and its launch's end reach the launcher in one
// write (issue 11). Outside callbacks (set-up, tests) writes go out at once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "net/fd.hpp"
#include "net/loop.hpp"
#include "net/uv_fwd.hpp"

namespace lattice::net {

class Stream {
 public:
  using ReadFn = std::function<void(std::string_view bytes)>;
  // "eof" (kind eof), "closed after writing" (end()), or "read: ..."/"write: ..." with libuv's
  // words (kind no_reader when a write found the reading end closed). Once.
  using CloseFn = std::function<void(const Error& why)>;

  // Wraps an existing connected socket or pipe fd (the parent's end of a socketpair, a pipe);
  // `peer` names it in messages ("fd N" when empty).
  static Result<std::unique_ptr<Stream>> open_fd(Loop& loop, UniqueFd fd, std::string peer = "");

  // Adopts an initialised, connected uv_tcp_t/uv_pipe_t (listeners and connect_tcp make Streams
  // this way). `peer` names the other end in logs.
  Stream(std::unique_ptr<Handle<uv_any_handle>> handle, std::string peer);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Begins reading. Call once.
  void start(ReadFn on_read, CloseFn on_close);
  // For a stream only written to, instead of start(): `on_close` hears how it ended (a write
  // that failed), and nothing is read.
  void watch_writes(CloseFn on_close);
  // Queued (held until the callback running now returns, if one does); dropped once the stream
  // has ended. Errors arrive through on_close.
  void write(std::string bytes);
  // Bounds write_queue_bytes() (0 = unlimited, the default): a write() that would take the queue
  // past `bytes` is dropped and the stream ends, from the loop, with "write: the peer is not
  // reading (N bytes queued, limit M)"; the handle is closed so that the stuck queue is freed.
  // A single write larger than the limit fails even on an empty queue. Checked at each write().
  void set_write_limit(size_t bytes) { write_limit_ = bytes; }
  // Writes `bytes` (may be empty), then closes the connection once everything queued has gone
  // out (the peer sees EOF) and reports "closed after writing" unless the stream ended before.
  void end(std::string bytes = {});
  // Abortive and idempotent: what the socket does not take at once is dropped, and no callback
  // runs afterwards.
  void close();

  // Stops and restarts reading, for backpressure: the peer's writes block once the kernel's
  // buffers fill. Both do nothing before start(), after watch_writes() and once the stream has
  // ended.
  void pause_reading();
  void resume_reading();
  // `fn` runs (once, from the loop) when the write queue next becomes empty, or the stream
  // ends with it full (a write failed: nothing more will go out); at once if it is empty. A
  // later call replaces an earlier one still waiting.
  void when_drained(std::function<void()> fn);

  bool ended() const { return finished_; }
  size_t write_queue_bytes() const { return queued_ + held_bytes_; }
  const std::string& peer() const { return peer_; }
  // The OS socket or pipe descriptor, for queries such as getsockopt or getsockname; -1 once
  // closed. The Stream still owns it: never read, write or close it.
  int fd() const;

 private:
  struct Callbacks {
    ReadFn on_read;
    CloseFn on_close;
  };
  // libuv's callbacks, defined in stream.cpp: nested, so they reach the members without their
  // libuv signatures appearing here.
  struct Io;
  // Ends the stream: stops reading (or closes the handle too) and reports `reason` unless it
  // ended before.
  void finish(const Error& why, bool close_handle);
  // The same, from the next loop iteration: for failures found inside write()/start().
  void finish_later(Error why, bool close_handle);
  uv_stream_s* raw() const;
  // Hands `count` buffers (moved from) to the socket: straight out if nothing is queued, the
  // rest behind the queue.
  void send(std::string* parts, size_t count);
  // Sends what write() held during a callback, now, and takes this stream off the held list.
  void flush_held();
  // The same, for a stream the caller takes off the list.
  void send_held_bytes();
  // Sends what every stream held, when the outermost callback returns (release_writes()).
  static void send_held() noexcept;
  friend void release_writes() noexcept;

  std::unique_ptr<Handle<uv_any_handle>> handle_;
  std::string peer_;
  std::shared_ptr<Callbacks> callbacks_;  // shared: kept alive while a callback runs
  std::shared_ptr<Stream*> self_;         // nulled by close(); deferred work checks it
  size_t queued_ = 0;
  std::vector<std::string> held_;  // written during a read callback, not yet sent
  size_t held_bytes_ = 0;
  size_t write_limit_ = 0;  // 0 = unlimited
  std::function<void()> on_drained_;
  bool paused_ = false;
  bool ending_ = false;
  bool failing_ = false;  // a failure is reported from the loop soon: later writes are dropped
  bool finished_ = false;
};

}  // namespace lattice::net
