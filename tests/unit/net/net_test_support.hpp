// Helpers for net/ tests: run the loop until a condition holds (with a deadline instead of
// sleeps), count live handles to prove nothing leaked, and make a fresh temp dir per test.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <string>

#include "net/loop.hpp"

namespace lattice::net::test {

// Generous: a loaded CI machine may be slow to fork, never this slow.
constexpr uint64_t kDeadlineMs = 10000;

// Runs the loop one event at a time until done() holds or the deadline passes; returns done().
bool run_until(Loop& loop, const std::function<bool()>& done, uint64_t deadline_ms = kDeadlineMs);

// Handles on the loop that are not closing (the Loop's own idle handle included).
int live_handles(Loop& loop);

// A fresh directory under $TMPDIR or /tmp, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace lattice::net::test
