// The launcher's own stdout or stderr, written without ever making the loop wait: a pipe or a
// terminal is written through a description of its own (reopened via /proc/self/fd, so the
// shell's keeps its blocking mode) in non-blocking mode, with what the reader has not taken yet
// queued here; the job stops reading the agents while too much is queued (job.cpp), so a pager
// or a stopped terminal (Ctrl-S) holds the ranks back instead of stalling heartbeats. A regular
// file, a device or a socket (which cannot be reopened) is written at once, as before. A reader
// that went away (EPIPE) is not slow: from then on nothing is queued, everything is dropped, and
// the owner hears of it once (the launch ends, as under srun and Hydra).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "net/loop.hpp"
#include "net/stream.hpp"

namespace lattice::launcher {

class OutputWriter {
 public:
  // With `same`: when `fd` is the file `same` writes (2>&1, one terminal), everything goes
  // through `same`, so a chunk of one is never split by the other's; `same` must outlive this.
  OutputWriter(net::Loop& loop, int fd, OutputWriter* same = nullptr);
  ~OutputWriter() { *self_ = nullptr; }
  OutputWriter(const OutputWriter&) = delete;
  OutputWriter& operator=(const OutputWriter&) = delete;

  void write(std::string data);
  // A delegating writer has no stream: `same` counts what it queued.
  size_t queued_bytes() const {
    return stream_ && !reader_gone_ ? stream_->write_queue_bytes() : 0;
  }
  // Once nothing is queued (at once when nothing is); a failed write counts as drained.
  void when_drained(std::function<void()> fn);
  // `fn` runs once, from the loop (never inside write()), when a write finds that nobody reads
  // any more. A delegating writer leaves it to `same`.
  void on_reader_gone(std::function<void()> fn) { on_reader_gone_ = std::move(fn); }

 private:
  void reader_gone();

  net::Loop& loop_;
  int fd_;
  OutputWriter* delegate_ = nullptr;     // the writer of the same file
  std::unique_ptr<net::Stream> stream_;  // null: written at once
  std::function<void()> on_reader_gone_;
  bool reader_gone_ = false;  // everything written since is dropped
  std::shared_ptr<OutputWriter*> self_ = std::make_shared<OutputWriter*>(this);  // for defer()
};

}  // namespace lattice::launcher
