// The per-launch PMI server of one node: ranks' bytes in, responses and fence/abort/failure
// events out through ServerHooks. No I/O and no clock of its own; slow operations (fences,
// node-attribute waits) park the request and finish through explicit calls (fence_complete).
// Every request is answered (abort excepted); nothing is thrown out of the public calls.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "pmi/codec.hpp"
#include "pmi/framer.hpp"
#include "pmi/kvs.hpp"
#include "pmi/limits.hpp"
#include "pmi/ring.hpp"

namespace lattice::pmi {

using ConnId = uint64_t;

struct LaunchInfo {
  std::string jobid;  // PMI-2 jobid and PMI-1 kvsname
  int world_size = 0;
  std::vector<int> local_ranks;  // global ranks on this node, in local-rank order
  std::string process_mapping;   // job attr + PMI-1 key "PMI_process_mapping"
  std::vector<int> appnums;      // each local rank's app (MPMD), as local_ranks; empty: all 0
  Limits limits;
  // PMI_PORT mode: each rank's secret PMI_ID (a decimal int, as MPICH's client sends it with
  // atoi) -> its rank. A port connection must name itself with one; each works once.
  std::map<std::string, int> port_ids;
};

enum class RankState { waiting, initialized, in_fence, finalized, gone };

// Name publishing (MPI_Publish_name / MPI_Lookup_name): PMI-1 publish_name, unpublish_name,
// lookup_name; PMI-2 name-publish, name-unpublish, name-lookup.
enum class NameOp { publish, unpublish, lookup };
std::string_view rank_state_name(RankState state);

struct RankStatus {
  int rank;
  RankState state;
  std::string last_command;
  uint64_t last_activity_ms;
  uint64_t fences_entered;
};

class ServerHooks {
 public:
  virtual ~ServerHooks() = default;
  virtual void send(ConnId conn, std::string bytes) = 0;  // write these bytes to conn
  // Every local rank entered fence `epoch` (1, 2, 3...); `local_puts` are theirs since the
  // previous fence (reserved-key entries included: carry them like any other).
  virtual void fence_ready(uint64_t epoch, KvList local_puts) = 0;
  // PMI-1 abort carries an exit code, PMI-2 abort none. rank is -1 when not known yet.
  virtual void abort_requested(int rank, std::optional<int> exit_code, std::string message) = 0;
  // The launch must fail; the engine ignores `conn` afterwards. rank is -1 when unknown. The
  // message does not name the rank (the hook knows it, and where it runs).
  virtual void client_failed(ConnId conn, int rank, std::string message) = 0;
  // A name request of `conn` (checked and bounded), served across the launch: the owner
  // answers later with Server::name_answer, never from inside this call. False: this launcher
  // publishes no names (the client hears "not supported").
  virtual bool name_request(ConnId conn, NameOp op, const std::string& name,
                            const std::string& port) {
    return false;
  }
  virtual void rank_initialized(int rank) {}
  virtual void rank_finalized(int rank) {}
  // Each request ('C') and response ('S') as printable text (non-printable bytes as \xNN),
  // only while tracing() says so: making the text costs more than answering a kvs-get.
  virtual bool tracing() const { return false; }
  virtual void trace(ConnId conn, char direction, std::string_view message) {}
  virtual uint64_t now_ms() = 0;
  // Upkeep that may wait until the answers sent so far are out (the store's merging after a
  // fence: Kvs::compact). The agent runs it on a later turn of its loop; by default, at once.
  // One may wait at a time: a call replaces one not yet run, whose work the new one covers
  // (compact() does what every publish before it owes).
  virtual void later(std::function<void()> upkeep) { upkeep(); }
};

class Server {
 public:
  Server(LaunchInfo info, ServerHooks& hooks);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // A new client connection; `rank` when known from how it was made (PMI_FD), else learned
  // from `initack pmiid=RANK` or `fullinit` (the per-launch Unix socket, whose door is locked
  // by file ownership and peer credentials).
  ConnId connect(std::optional<int> rank);
  // A connection through the PMI_PORT listener, which anyone of the job's user could reach:
  // it names its rank only through a one-time PMI_ID (initack pmiid= or fullinit srcid=).
  ConnId connect_port();
  void receive(ConnId conn, std::string_view bytes);
  void eof(ConnId conn);
  // Every rank's puts of fence `epoch` on every node: they become visible and the parked ranks
  // are answered. Only the next unfinished announced epoch is accepted.
  void fence_complete(uint64_t epoch, KvStore merged);  // the store is moved in
  // Ranks parked in `epoch` (or earlier) get rc != 0 with `message`; later entries into an
  // epoch up to this one are refused at once.
  void fence_failed(uint64_t epoch, const std::string& message);

  // The answer to `conn`'s pending name request: the port (lookup; ignored otherwise) or why
  // not. Ignored when the connection is gone or has nothing pending.
  void name_answer(ConnId conn, const Result<std::string>& answer);

  std::vector<RankStatus> status() const;       // one per local rank, in local-rank order
  std::vector<int> ranks_not_in_fence() const;  // local ranks a pending fence still waits for
  uint64_t fence_epoch() const { return announced_epoch_; }  // highest fence_ready epoch
  size_t store_runs() const { return kvs_.runs(); }          // sorted runs a get searches (kvs.hpp)

 private:
  enum class FenceKind { barrier, kvs_fence, ring };

  struct Conn {
    explicit Conn(ConnId conn_id, size_t max_frame) : id(conn_id), framer(max_frame) {}
    ConnId id;
    std::optional<int> rank;
    Framer framer;
    // How far the client got, in order: the PMI_PORT handshake (initack), the `cmd=init` line
    // (either version), its rank initialized (init v1 / fullinit), finalize.
    enum class Phase { fresh, identified, greeted, initialized, finalized };
    Phase phase = Phase::fresh;
    bool by_port_id = false;              // must identify with a PMI_ID from LaunchInfo::port_ids
    bool aborted = false;                 // sent abort (allowed in any phase after init)
    bool closed = false;                  // EOF seen
    bool dead = false;                    // reported through client_failed: ignored from now on
    std::optional<Command> pending_name;  // a name request waiting for name_answer
  };
  struct Parked {  // a fence request waiting for its epoch to complete
    ConnId conn;
    Command request;
    FenceKind kind;
  };
  struct Slot {  // one local rank
    Slot(int global_rank, int app) : rank(global_rank), appnum(app) {}
    int rank;
    int appnum;
    RankState state = RankState::waiting;
    std::string last_command;
    uint64_t last_activity_ms = 0;
    uint64_t fences_entered = 0;
    std::optional<Parked> parked;
  };
  struct Waiter {  // info-getnodeattr wait=TRUE until the key is put on this node
    ConnId conn;
    Command request;
    std::string key;
  };

  using Handler = void (Server::*)(Conn&, const Command&);
  struct CommandSpec {
    Wire wire;
    std::string_view name;
    std::string_view pmi1_response;  // PMI-1 answer's cmd; PMI-2 answers are "<name>-response"
    bool needs_init;
    Handler handler;
  };
  static const std::vector<CommandSpec>& command_table();
  static const CommandSpec* find_spec(const Command& request);

  // server.cpp: connections, dispatch, replies
  void receive_frames(Conn& conn);
  void dispatch(Conn& conn, const Command& request);
  void touch(const Conn& conn, const Command& request);
  void reply(Conn& conn, const Command& request, Response response);
  Response error_response(const Command& request, std::string_view message) const;
  static std::string response_name(const Command& request);
  void fail_conn(Conn& conn, const std::string& message);
  void internal_error(ConnId conn, std::string_view what) noexcept;
  Conn* find_conn(ConnId id);
  Slot* find_slot(int rank);
  Slot* slot_of(const Conn& conn);
  int appnum_of(const Conn& conn);          // 0 before the rank is known
  std::string who(const Conn& conn) const;  // "rank 3" or "connection 7"
  Status init_rank(Conn& conn, std::optional<int> claimed);
  // The rank behind a one-time PMI_ID, which is used up; an error for any other text.
  Result<int> redeem_port_id(const std::string& id);
  std::optional<std::string_view> lookup(
      std::string_view key) const;  // visible store + process mapping
  Status check_kvsname(const Command& request) const;

  // server_fence.cpp
  void enter_fence(Conn& conn, const Command& request, FenceKind kind,
                   const RingValues* ring_input);
  void announce_if_ready();
  void answer_parked(Slot& slot, const std::map<int, RingValues>& ring);

  // handlers_pmi1.cpp
  void on_init(Conn& conn, const Command& request);
  void on_initack(Conn& conn, const Command& request);
  void on_get_maxes(Conn& conn, const Command& request);
  void on_get_appnum(Conn& conn, const Command& request);
  void on_get_my_kvsname(Conn& conn, const Command& request);
  void on_get_universe_size(Conn& conn, const Command& request);
  void on_put(Conn& conn, const Command& request);
  void on_get(Conn& conn, const Command& request);
  void on_barrier_in(Conn& conn, const Command& request);
  void on_finalize(Conn& conn, const Command& request);
  void on_abort(Conn& conn, const Command& request);
  void on_spawn_pmi1(Conn& conn, const Command& request);
  void on_unsupported(Conn& conn, const Command& request);

  // handlers_names.cpp (both wires)
  void on_name(Conn& conn, const Command& request);

  // handlers_pmi2.cpp
  void on_fullinit(Conn& conn, const Command& request);
  void on_job_getid(Conn& conn, const Command& request);
  void on_getjobattr(Conn& conn, const Command& request);
  void on_putnodeattr(Conn& conn, const Command& request);
  void on_getnodeattr(Conn& conn, const Command& request);
  void on_kvs_put(Conn& conn, const Command& request);
  void on_kvs_fence(Conn& conn, const Command& request);
  void on_kvs_get(Conn& conn, const Command& request);
  void on_ring(Conn& conn, const Command& request);

  LaunchInfo info_;
  ServerHooks& hooks_;
  Kvs kvs_;
  std::map<ConnId, Conn> conns_;  // never erased: references stay valid across hook calls
  ConnId next_conn_ = 1;
  std::vector<Slot> slots_;  // fixed at construction: references stay valid
  std::unordered_map<int, size_t> slot_index_;
  std::vector<Waiter> waiters_;
  uint64_t announced_epoch_ = 0;  // highest epoch passed to fence_ready
  uint64_t completed_epoch_ = 0;  // highest epoch completed by fence_complete
  uint64_t failed_epoch_ = 0;     // highest epoch failed by fence_failed
  std::string failure_message_;
};

}  // namespace lattice::pmi
