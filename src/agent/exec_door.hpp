// A launch's exec socket (<launch dir>/exec.sock): where lattice-mpi-launcher, started by an MPI
// launcher inside the launch in place of ssh, asks for a command on one of the launch's nodes.
// Only the job's user gets in (SO_PEERCRED, on top of the directory's 0700), and of them only a
// request carrying the launch's token; one request per connection, answered by the command's
// output and, last, its exit status. Bounded: a request within a few seconds and a few hundred
// KiB, a fixed number of clients at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/log_limiter.hpp"
#include "base/result.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"
#include "wire/exec_codec.hpp"

namespace lattice::agent {

class ExecDoor {
 public:
  struct Hooks {
    // A request that passed the checks, from client `id`; an error is said to the client, which
    // then exits 255.
    std::function<Status(uint64_t id, wire::ExecRequest request)> start;
    // Client `id` went away (its command, if any, should end).
    std::function<void(uint64_t id)> gone;
  };
  // Admits clients of `uid` (or root); the caller gives the socket file to that user.
  static Result<std::unique_ptr<ExecDoor>> open(net::Loop& loop, const std::string& path,
                                                uint32_t uid, std::string token, Hooks hooks);
  ~ExecDoor();
  ExecDoor(const ExecDoor&) = delete;
  ExecDoor& operator=(const ExecDoor&) = delete;

  // An event for client `id` (dropped when it is gone); an `exited` event ends the connection.
  void send(uint64_t id, const wire::ExecEvent& event);
  const std::string& path() const { return listener_->path(); }

 private:
  struct Client;
  ExecDoor(net::Loop& loop, uint32_t uid, std::string token, Hooks hooks);
  void admit(std::unique_ptr<net::Stream> stream);
  void request(uint64_t id, wire::ExecRequest request);
  void drop(uint64_t id);  // closes the client; its command, if running, is told to end

  net::Loop& loop_;
  uint32_t uid_;
  std::string token_;
  Hooks hooks_;
  std::unique_ptr<net::UnixListener> listener_;
  std::map<uint64_t, std::unique_ptr<Client>> clients_;
  std::vector<std::unique_ptr<Client>> closed_;  // destroyed outside their callbacks
  net::Timer reaper_;
  net::Timer sweeper_;
  LogLimiter refusals_;  // other users, wrong tokens: one line a second each
  uint64_t next_id_ = 1;
};

}  // namespace lattice::agent
