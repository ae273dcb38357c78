// Learns the job's user once per launch from `lattice-rank-exec --describe` (passwd and group
// lookups may wait on NSS; the agent's loop must not), so that a root agent can become that user
// in each rank's child itself and start every rank with one exec.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/launch_spec.hpp"
#include "base/result.hpp"
#include "net/loop.hpp"
#include "net/process.hpp"
#include "net/timer.hpp"
#include "proc/own_user.hpp"

namespace lattice::agent {

// "G1,G2,...", as lattice-rank-exec's --groups takes them.
std::string group_list(const std::vector<uint32_t>& groups);

class UserLookup {
 public:
  // The user as this node's passwd and groups have it, or why not (the helper's own words).
  using Done = std::function<void(Result<proc::ProcessUser>)>;

  // A lookup that waits this long on NSS is killed, and fails saying so.
  static constexpr uint64_t kTimeoutMs = 30000;

  // Starts the helper; `done` runs once, from the loop, after it exited and both its outputs
  // ended. Not called if the UserLookup is destroyed first (the helper is then killed).
  static Result<std::unique_ptr<UserLookup>> start(net::Loop& loop, const std::string& rank_exec,
                                                   const JobUser& user, Done done,
                                                   uint64_t timeout_ms = kTimeoutMs);
  ~UserLookup();
  UserLookup(const UserLookup&) = delete;
  UserLookup& operator=(const UserLookup&) = delete;

 private:
  UserLookup(net::Loop& loop, JobUser user, Done done)
      : user_(std::move(user)), done_(std::move(done)), deadline_(loop) {}
  void collect(std::unique_ptr<net::Stream> stream, std::string& into, size_t limit,
               std::unique_ptr<net::Stream>& slot);
  void finish_if_done();

  JobUser user_;
  Done done_;
  std::unique_ptr<net::Process> helper_;
  std::unique_ptr<net::Stream> out_stream_, err_stream_;
  std::string out_, err_;
  int open_streams_ = 0;
  bool exited_ = false;
  bool overflowed_ = false;
  std::optional<uint64_t> timed_out_ms_;
  net::ExitInfo exit_;
  net::Timer deadline_;
};

}  // namespace lattice::agent
