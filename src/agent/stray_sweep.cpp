#include "agent/stray_sweep.hpp"

#include <csignal>

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::agent {
namespace {

// How often the group is looked at while something is left in it: a process that got SIGTERM
// is usually gone by the first look.
constexpr uint64_t kCheckPeriodMs = 20;
// Past this after SIGKILL, something unkillable (a process stuck in the kernel) is left there,
// said once; the launch ends without waiting for it.
constexpr uint64_t kGiveUpMs = 10000;

}  // namespace

StraySweep::StraySweep(net::Loop& loop, proc::ProcessGroup& group, uint64_t grace_ms,
                       std::function<void(uint32_t)> done)
    : group_(group), grace_ms_(grace_ms), done_(std::move(done)), timer_(loop), loop_(loop) {}

void StraySweep::start() {
  if (started_) return;
  started_ = true;
  started_ms_ = loop_.now_ms();
  auto left = group_.members();
  seen_.insert(left.begin(), left.end());
  if (!left.empty()) {
    LAT_LOG(info, "contain", group_.describe(), ": ", left.size(),
            " processes left behind, sent SIGTERM");
    group_.signal(SIGTERM);
  }
  timer_.start(0, 0, [this] { check(); });
}

void StraySweep::check() {
  auto left = group_.members();
  seen_.insert(left.begin(), left.end());
  const uint64_t waited = loop_.now_ms() - started_ms_;
  if (left.empty() || waited >= grace_ms_ + kGiveUpMs) {
    if (!left.empty())
      LAT_LOG(warn, "contain", group_.describe(), ": ", left.size(),
              " processes survive SIGKILL; the launch ends without them");
    finished_ = true;
    return done_(strays());
  }
  if (!killed_ && waited >= grace_ms_) {
    killed_ = true;
    LAT_LOG(info, "contain", group_.describe(), ": ", left.size(), " processes left after ",
            grace_ms_, " ms, sent SIGKILL");
  }
  if (killed_) group_.signal(SIGKILL);  // again each time: what they forked meanwhile too
  timer_.start(kCheckPeriodMs, 0, [this] { check(); });
}

}  // namespace lattice::agent
