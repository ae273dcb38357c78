// PMI-1/PMI-2 wire-up (MPICH, Cray MPICH, Slurm's libpmi2): the agent's own PMI server and its
// doors: each rank's PMI_FD socketpair, the per-launch Unix socket in a directory only the job's
// user can enter, and the optional PMI_PORT listener, which admits only the job's user.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "agent/launch_names.hpp"
#include "agent/launch_spec.hpp"
#include "agent/wire_up.hpp"
#include "base/clock.hpp"
#include "base/log_limiter.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/stream.hpp"
#include "net/timer.hpp"
#include "pmi/server.hpp"

namespace lattice::agent {

class PmiWireUp final : public WireUp, private pmi::ServerHooks {
 public:
  // `spec`, `clock`, `names` and `events` must outlive it.
  PmiWireUp(net::Loop& loop, const LaunchSpec& spec, const Clock& clock, LaunchNames& names,
            WireUpEvents& events);

  Status open(LaunchDir& dir) override;
  void prepare(std::function<void(Status)> ready) override { ready({}); }
  Status rank_environment(int rank, proc::RankEnvInput& in, net::SpawnSpec& spawn) override;
  void rank_started(int rank, net::Process& process) override;
  void fence_complete(uint64_t epoch, KvStore merged) override {
    pmi_.fence_complete(epoch, std::move(merged));
  }
  void fence_failed(uint64_t epoch, const std::string& message) override {
    pmi_.fence_failed(epoch, message);
  }
  std::optional<FenceWait> fence_waiting() const override;
  std::vector<pmi::RankStatus> status() const override { return pmi_.status(); }
  bool finalize_missing(int rank) const override { return unfinalized_.count(rank) > 0; }
  bool all_finalized() const override { return finalized_ == local_count_; }
  uint64_t fence_epoch() const override { return pmi_.fence_epoch(); }
  std::vector<int> ranks_not_in_fence() const override { return pmi_.ranks_not_in_fence(); }
  void modex_asked(int from, int rank, std::function<void(Result<std::string>)> answer) override;
  void close() override;

 private:
  struct Conn {
    std::unique_ptr<net::Stream> stream;  // null once it ended (its eof is being handled)
    int rank = -1;
  };
  // How a PMI connection reached the launch: it decides who may use it and how it names its
  // rank (pmi::Server::connect / connect_port).
  enum class Door { rank_fd, socket, port };

  // A connection on the socket or the port, admitted only from the job's user (or root).
  void admit(std::unique_ptr<net::Stream> stream, Door door);
  void serve(std::unique_ptr<net::Stream> stream, Door door, std::optional<int> rank);

  // pmi::ServerHooks
  void send(pmi::ConnId conn, std::string bytes) override;
  void fence_ready(uint64_t epoch, pmi::KvList local_puts) override {
    events_.fence_entered(epoch, std::move(local_puts));
  }
  void abort_requested(int rank, std::optional<int> exit_code, std::string message) override {
    events_.rank_aborted(rank, exit_code, std::move(message));
  }
  void client_failed(pmi::ConnId conn, int rank, std::string message) override;
  bool name_request(pmi::ConnId conn, pmi::NameOp op, const std::string& name,
                    const std::string& port) override;
  void rank_initialized(int rank) override {
    unfinalized_.insert(rank);
    events_.rank_initialized(rank);
  }
  void rank_finalized(int rank) override {
    unfinalized_.erase(rank);
    ++finalized_;
    events_.rank_finalized(rank);
  }
  bool tracing() const override { return log_level() >= LogLevel::trace; }
  void trace(pmi::ConnId conn, char direction, std::string_view message) override;
  uint64_t now_ms() override { return clock_.now_ms(); }
  // On the next loop turn: the answers this turn wrote go out first (writes are held until the
  // callback returns).
  void later(std::function<void()> upkeep) override {
    upkeep_timer_.start(0, 0, std::move(upkeep));  // replaces one still waiting
  }

  net::Loop& loop_;
  const LaunchSpec& spec_;
  const Clock& clock_;
  LaunchNames& names_;
  WireUpEvents& events_;
  std::map<int, std::string> port_ids_;  // rank -> its one-time PMI_ID (PMI_PORT mode)
  pmi::Server pmi_;
  std::map<pmi::ConnId, Conn> conns_;
  std::set<int> unfinalized_;  // ranks initialized and not finalized
  const size_t local_count_;   // this node's ranks
  size_t finalized_ = 0;
  std::unique_ptr<net::UnixListener> socket_listener_;
  std::unique_ptr<net::TcpListener> port_listener_;
  LogLimiter refusals_;  // other users at the socket or the port: one line a second each
  net::Timer upkeep_timer_;
};

}  // namespace lattice::agent
