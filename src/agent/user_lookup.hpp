// Learns the job's user once per launch from `lattice-rank-exec --describe` (passwd and group
// lookups may wait on NSS; the agent's loop must not), so that a root agent can become that user
// in each rank's child itself and start every rank with one exec.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "agent/launch_spec.hpp"
#include "base/result.hpp"
#include "net/loop.hpp"
#include "net/process.hpp"
#include "proc/own_user.hpp"

namespace lattice::agent {

class UserLookup {
 public:
  // The user as this node's passwd and groups have it, or why not (the helper's own words).
  using Done = std::function<void(Result<proc::ProcessUser>)>;

  // Starts the helper; `done` runs once, from the loop, after it exited and both its outputs
  // ended. Not called if the UserLookup is destroyed first (the helper is then killed).
  static Result<std::unique_ptr<UserLookup>> start(net::Loop& loop, const std::string& rank_exec,
                                                   const JobUser& user, Done done);
  ~UserLookup();
  UserLookup(const UserLookup&) = delete;
  UserLookup& operator=(const UserLookup&) = delete;

 private:
  UserLookup(JobUser user, Done done) : user_(std::move(user)), done_(std::move(done)) {}
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
  net::ExitInfo exit_;
};

}  // namespace lattice::agent
