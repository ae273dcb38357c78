// The launcher's stdin, read on the loop for the launch's input rank(s): a pipe, socket or
// terminal through a libuv stream; a regular file or a device such as /dev/null, which epoll
// cannot watch, in 64 KiB reads one loop turn apart (they do not block for long). The job pauses
// it while the ranks have not taken what was sent (StdinTaken), so it reads as fast as they do.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "net/loop.hpp"
#include "net/stream.hpp"
#include "net/timer.hpp"

namespace lattice::launcher {

class InputSource {
 public:
  using DataFn = std::function<void(std::string_view data)>;
  using EofFn = std::function<void()>;
  // Reads a duplicate of `fd` (the caller's stays as it is). on_eof runs once, also after a
  // read error (said on stderr).
  static Result<std::unique_ptr<InputSource>> open(net::Loop& loop, int fd, DataFn on_data,
                                                   EofFn on_eof);
  ~InputSource();
  // Stops and restarts reading (the ranks have not taken what was sent yet).
  void pause();
  void resume();
  InputSource(const InputSource&) = delete;
  InputSource& operator=(const InputSource&) = delete;

 private:
  InputSource(net::Loop& loop, DataFn on_data, EofFn on_eof);
  void read_file();  // one chunk of a file, then the next on a later turn

  DataFn on_data_;
  EofFn on_eof_;
  std::unique_ptr<net::Stream> stream_;  // pipes, sockets, terminals
  int file_fd_ = -1;                     // files and devices
  net::Timer file_timer_;
  bool ended_ = false;
  bool paused_ = false;
};

}  // namespace lattice::launcher
