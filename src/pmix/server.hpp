// The OpenPMIx server library (libpmix) behind plain C++ values, for Open MPI's wire-up.
// It lives in a module of its own, lattice-pmix.so, which Server::start loads on first use
// (module.hpp says why). libpmix runs its own progress thread and calls its host from there; every
// such call is copied into a queue here and the owner is woken (a thread-safe `wake`, net::Async in
// the agent) to drain() it on the loop, so all of the agent's logic stays on one thread. Answers go
// back through the Completion libpmix handed over; libpmix accepts them from any thread. libpmix
// allows one server per process: Server::start refuses a second.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "pmix/app_setup_codec.hpp"

namespace lattice::pmix {

// libpmix's callback and its argument for one pending request (opaque outside this layer).
struct Completion {
  void* fn = nullptr;
  void* data = nullptr;
};

// A local fence: this node's ranks' blob, to be answered with every node's blobs concatenated.
struct FenceCall {
  std::string data;
  Completion done;
};

// A request for the data one rank of this namespace put (PMIx direct modex), or an abort.
struct RankCall {
  int rank = -1;
  Completion done;
};

// One program of a PMIx_Spawn, as libpmix gave it (argv[0] is the program, as PMIx has it).
struct SpawnApp {
  std::string cmd;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=VALUE
  std::string cwd;
  int maxprocs = 0;
  std::vector<std::string> hosts;  // PMIX_HOST, split at commas
  std::string hostfile;            // PMIX_HOSTFILE
};

// A rank's PMIx_Spawn, to be answered with the children's namespace (or a failure).
struct SpawnCall {
  int rank = -1;
  std::vector<SpawnApp> apps;
  std::string workdir;  // PMIX_WDIR given for the job
  std::string refused;  // a directive Lattice does not honour (answered at once with it)
  Completion done;
};

// PMIx_Publish / PMIx_Lookup / PMIx_Unpublish of one client (pmi-wire.md §7).
struct NameCall {
  enum class Op { publish, lookup, unpublish } op = Op::lookup;
  // Who may see a publish, or where a lookup looks (PMIx's range): the job's launch, the
  // publisher's node, its namespace, the publisher alone.
  enum class Scope : uint8_t { launch, node, nspace, proc } scope = Scope::launch;
  int rank = -1;
  // publish: each key and its value (its PMIx type in its first byte: names_upcalls.cpp);
  // lookup and unpublish: the keys (unpublish: none = all).
  std::vector<std::pair<std::string, std::string>> names;
  std::string refused;  // why libpmix's request cannot be served (answered at once with an error)
  bool first_read = false;  // publish: PMIX_PERSIST_FIRST_READ
  bool wait = false;        // lookup: PMIX_WAIT
  uint32_t timeout_s = 0;   // lookup: PMIX_TIMEOUT (0: as long as the host allows)
  Completion done;
};

// A participant of a collective: a rank, or (rank -1) every rank of the namespace.
struct ProcRef {
  std::string nspace;
  int rank = -1;
};

// PMIx_Connect / PMIx_Disconnect / a fence over some procs only / PMIx_Group_construct and
// _destruct: libpmix calls once per node, when all of the node's participants have called;
// `data` is a fence's blob for this node, or a group's members' endpoint data.
struct CollectiveCall {
  enum class Kind {
    connect,
    disconnect,
    fence,
    group_construct,
    group_destruct
  } kind = Kind::connect;
  std::vector<ProcRef> procs;
  std::string data;
  std::string group;  // a group's name
  Completion done;
};

// A process as PMIx names it; `rank` is PMIx's own value (kRankWildcard: every rank).
struct ProcId {
  std::string nspace;
  uint32_t rank = 0;
};
inline constexpr uint32_t kRankWildcard = 0xfffffffeu;  // PMIX_RANK_WILDCARD

// One entry of an info list as it travels between agents: only flags, integers, strings and
// processes are carried (event_values.cpp says which PMIx types those are).
struct InfoValue {
  enum class Kind : uint8_t { flag, integer, text, procs };
  std::string key;
  uint16_t pmix_type = 0;  // restored as is on delivery
  Kind kind = Kind::flag;
  int64_t number = 0;  // flag (0/1) and integer
  std::string text;
  std::vector<ProcId> procs;  // one for PMIX_PROC, any number for an array of them
};

// Bounds on what an event carries (a rank's list beyond them is cut, and the cut logged).
inline constexpr size_t kMaxEventInfos = 32;
inline constexpr size_t kMaxEventText = 4096;  // per string, key or nspace
inline constexpr size_t kMaxEventProcs = 256;  // per value

// The PMIx values the agent raises events with (checked against pmix.h in event_upcalls.cpp).
inline constexpr int kProcAborted = -7;                      // PMIX_ERR_PROC_ABORTED
inline constexpr uint16_t kTypeInt = 6;                      // PMIX_INT
inline constexpr uint16_t kTypeProc = 22;                    // PMIX_PROC
inline constexpr uint16_t kTypeDataArray = 39;               // PMIX_DATA_ARRAY
inline constexpr const char* kAffectedProc = "pmix.evproc";  // PMIX_EVENT_AFFECTED_PROC
inline constexpr const char* kExitCode = "pmix.exit.code";   // PMIX_EXIT_CODE

// pmix_data_range_t's values.
enum class EventRange : uint8_t {
  undefined = 0,
  rm = 1,
  local = 2,
  nspace = 3,
  session = 4,
  global = 5,
  custom = 6,
  proc_local = 7,
};

// An event raised by a rank of the namespace (or for it: a rank's abnormal end).
struct EventNotice {
  int code = 0;
  uint32_t source_rank = 0;  // in the namespace
  uint8_t range = 0;         // pmix_data_range_t (EventRange)
  std::vector<InfoValue> info;
};

// What a rank asked of PMIx_Job_control.
enum class ControlAction { signal, kill, terminate };
struct ControlCall {
  int requester = -1;
  std::vector<ProcId> targets;  // as named (any namespace: the launch judges)
  std::vector<InfoValue> directives;
  Completion done;
};

// Answers to a job control, by what PMIx says of them.
enum class Answer { success, not_supported, bad_param, not_found, error };

// What a namespace's clients do, delivered on the loop by Server::drain.
class NamespaceEvents {
 public:
  virtual ~NamespaceEvents() = default;
  virtual void client_connected(int rank) = 0;
  // The client stays blocked in PMIx_Finalize until release(call): so its exit can never be
  // seen before its finalize.
  virtual void client_finalized(RankCall call) = 0;
  // The client stays blocked in PMIx_Abort until release(call).
  virtual void client_aborted(RankCall call, int status, std::string message) = 0;
  virtual void fence_entered(FenceCall call) = 0;
  // A local client needs `call.rank`'s data, which lives on another node.
  virtual void modex_requested(RankCall call) = 0;
  // A client called PMIx_Spawn; it waits until answer_spawn(call, ...).
  virtual void spawn_requested(SpawnCall call) = 0;
  // A rank's PMIx_Notify_event whose range goes beyond this node (libpmix has delivered it
  // here already); answered already.
  virtual void event_raised(EventNotice notice) = 0;
  // PMIx_Job_control(_nb) of one of its ranks: answer with Server::answer_control.
  virtual void control_asked(ControlCall call) = 0;
  virtual void names_called(NameCall call) = 0;
  virtual void collective_entered(CollectiveCall call) = 0;
};

// The job as libpmix must know it (node map, proc map, sizes, ids).
struct JobLayout {
  std::string nspace;
  std::string jobid;
  std::vector<std::string> nodes;  // node names, by node index
  std::vector<int> rank_nodes;     // node index of every rank
  std::vector<int> appnums;        // app of every rank, numbered in rank order (empty: all 0)
  int this_node = 0;               // -1: none of its ranks runs here
  // The launch's private directory on this node (owned by the job's user): Open MPI puts its
  // session directory where the job's tmpdir and namespace dir say, and the server's own
  // directory is not the job's to write.
  std::string tmpdir;
  // PMIx_Spawn's children: who spawned them (PMIX_PARENT_ID); empty: not spawned.
  std::string parent_nspace;
  int parent_rank = 0;
};

struct ServerOptions {
  std::string tmpdir;    // private to this agent; libpmix's rendezvous files go there
  std::string hostname;  // this node's name in every JobLayout::nodes
};

class Server {
 public:
  // Loads the module and initialises libpmix. `wake` is called from libpmix's thread whenever
  // drain() has work.
  static Result<std::unique_ptr<Server>> start(const ServerOptions& options,
                                               std::function<void()> wake);
  // Finalizes libpmix; a finalize that hangs is abandoned after a few seconds.
  virtual ~Server() = default;

  // Registers the namespace and every local rank (as uid:gid); `done` runs from a later
  // drain(). Until deregister_job, the namespace's events go to `events`.
  virtual void register_job(const JobLayout& layout, uint32_t uid, uint32_t gid,
                            NamespaceEvents& events, std::function<void(Status)> done) = 0;
  // RFC0029: the launcher's setup data for `nspace`, checked by the agent, handed to
  // PMIx_server_setup_local_support (app_setup.hpp); `done` runs from a later drain().
  virtual void setup_local_support(const std::string& nspace,
                                   const std::vector<SetupEntry>& entries,
                                   std::function<void(Status)> done) = 0;
  // What a rank needs in its environment to reach this server (PMIx_server_setup_fork).
  virtual Result<std::vector<std::string>> client_environment(const std::string& nspace,
                                                              int rank) = 0;
  // Forgets the namespace: its events are no longer delivered and requests still arriving are
  // answered with an error; libpmix's own clean-up runs in the background.
  virtual void deregister_job(const std::string& nspace) = 0;

  // Runs the queued events on the caller's (the loop's) thread.
  virtual void drain() = 0;

  // Answers: a fence with every node's blobs (or a failure), a direct modex with the rank's
  // data; a finalize or an abort is released once the launch has acted on it.
  virtual void answer_fence(const FenceCall& call, bool ok, std::string data) = 0;
  virtual void answer_modex(const RankCall& call, bool ok, std::string data) = 0;
  virtual void release(const RankCall& call) = 0;
  // The children's namespace, or why none was made.
  virtual void answer_spawn(const SpawnCall& call, const Result<std::string>& nspace) = 0;
  // A publish or unpublish: its outcome; a lookup: the names found (an error: none found).
  virtual void answer_names(
      const NameCall& call,
      const Result<std::vector<std::pair<std::string, std::string>>>& found) = 0;
  // A collective: every participating node's data joined (a fence), or a failure.
  // `context_id`: a group construction's id, unique in the launch (0: none).
  virtual void answer_collective(const CollectiveCall& call, bool ok, std::string data,
                                 uint64_t context_id) = 0;
  // Hands `notice` to this node's clients of `nspace` (PMIx_Notify_event, its source kept); `done`
  // runs from a later drain() once libpmix has it.
  virtual void notify(const std::string& nspace, const EventNotice& notice,
                      std::function<void(Status)> done) = 0;
  virtual void answer_control(const ControlCall& call, Answer answer) = 0;
  // Fetches what local `rank` of `nspace` put, for a direct modex from another node.
  virtual void local_modex(const std::string& nspace, int rank,
                           std::function<void(Result<std::string>)> done) = 0;

 protected:
  Server() = default;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
};

}  // namespace lattice::pmix
