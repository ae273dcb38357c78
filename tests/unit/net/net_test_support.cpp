// net/ test helpers. run_until wakes through a deadline timer, so it never busy-waits.
#include "net_test_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "net/timer.hpp"

namespace lattice::net::test {

bool run_until(Loop& loop, const std::function<bool()>& done, uint64_t deadline_ms) {
  bool expired = false;
  Timer deadline(loop);
  deadline.start(deadline_ms, 0, [&] { expired = true; });
  while (!done() && !expired) uv_run(loop.raw(), UV_RUN_ONCE);
  return done();
}

int live_handles(Loop& loop) {
  int count = 0;
  uv_walk(
      loop.raw(),
      [](uv_handle_t* h, void* arg) {
        if (!uv_is_closing(h)) ++*static_cast<int*>(arg);
      },
      &count);
  return count;
}

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/lattice-net-test-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace lattice::net::test
