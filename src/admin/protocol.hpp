// The admin socket's bytes, both ends: the agent gathers one request line from a client (at most
// kMaxRequestBytes, however much the client sends), and `lattice admin` gathers the answer (at
// most kMaxAnswerBytes) and makes it safe to print. Pure: the agent and the client move bytes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace lattice::admin {

// One short line ("status LAUNCH_ID"); a longer one is cut here and answered as unknown.
inline constexpr size_t kMaxRequestBytes = 1024;

class RequestBuffer {
 public:
  // The request, once `bytes` complete it (a '\n', or kMaxRequestBytes without one); nullopt
  // before, and after it was given once (a client gets one answer).
  std::optional<std::string> add(std::string_view bytes);

 private:
  std::string line_;
  bool given_ = false;
};

// Far beyond a status of every launch an agent allows (each rank a line of about 60 bytes).
inline constexpr size_t kMaxAnswerBytes = size_t{64} << 20;

// What `lattice admin` prints: the answer's lines through printable() (it may quote what ranks
// sent, and goes to a terminal); `error` when the agent refused the request ("error: ...", the
// command then exits 1); `cut` when it reached kMaxAnswerBytes and the rest was not read.
struct Answer {
  std::string text;
  bool error = false;
  bool cut = false;
};

class AnswerBuffer {
 public:
  // False once the answer reached kMaxAnswerBytes: read no more.
  bool add(std::string_view bytes);
  Answer take() const;

 private:
  std::string bytes_;
  bool cut_ = false;
};

}  // namespace lattice::admin
