// Server over libpmix 4.x, built into lattice-pmix.so (module.hpp). The module functions below
// run on libpmix's progress thread: they only copy their arguments into an Event and wake the
// owner. Everything else runs on the owner's thread. libpmix's module has no context pointer, so
// the one live server is reached through a mutex-guarded static (libpmix itself allows one
// server per process).
#include "pmix/server.hpp"

#include <pmix.h>
#include <pmix_server.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "base/all_done.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"
#include "pmix/app_setup_info.hpp"
#include "pmix/event_upcalls.hpp"
#include "pmix/job_info.hpp"
#include "pmix/module.hpp"
#include "pmix/names_upcalls.hpp"
#include "pmix/spawn_apps.hpp"

namespace lattice::pmix {

struct Event {
  enum class Kind {
    connected,
    finalized,
    aborted,
    fence,
    modex,
    spawn,
    names,
    collective,
    done,
    call
  } kind;
  std::string nspace;
  int rank = -1;
  int status = 0;
  std::string text;  // abort message, fence blob, operation name, or fetched data
  Completion completion;
  uint64_t token = 0;                          // Kind::done: which of our own requests finished
  std::shared_ptr<NameCall> names;             // Kind::names
  std::shared_ptr<CollectiveCall> collective;  // Kind::collective
  std::function<void(NamespaceEvents*)> run;   // Kind::call (post_call)
  SpawnCall spawn;                             // Kind::spawn
};

namespace {

struct Impl {
  std::function<void()> wake;
  std::mutex mutex;
  std::deque<Event> queue;  // guarded by mutex
  // The rest belongs to the owner's thread.
  std::map<std::string, NamespaceEvents*> namespaces;
  uint64_t next_token = 1;
  // Our requests to libpmix waiting for its answer, with the namespace they serve: forgetting a
  // namespace drops its callbacks, whose owners (the launch) may be gone when libpmix answers.
  struct Pending {
    std::string nspace;
    std::function<void(int status, std::string data)> fn;
  };
  std::map<uint64_t, Pending> pending;

  uint64_t expect(const std::string& nspace, std::function<void(int, std::string)> fn) {
    uint64_t token = next_token++;
    pending[token] = Pending{nspace, std::move(fn)};
    return token;
  }
  void forget(const std::string& nspace) {
    for (auto it = pending.begin(); it != pending.end();)
      it = it->second.nspace == nspace ? pending.erase(it) : std::next(it);
  }
};

std::mutex g_mutex;
Impl* g_server = nullptr;  // guarded by g_mutex

// Finalize gets this long; then the agent goes on without it (it is exiting anyway).
constexpr auto kFinalizeBudget = std::chrono::seconds(5);

void post(Event event) {
  std::lock_guard<std::mutex> global(g_mutex);
  if (!g_server) return;
  {
    std::lock_guard<std::mutex> lock(g_server->mutex);
    g_server->queue.push_back(std::move(event));
  }
  g_server->wake();
}

Event event(Event::Kind kind, const pmix_proc_t* proc) {
  Event e{kind, {}, -1, 0, {}, {}, 0, nullptr, nullptr, {}, {}};
  if (proc) {
    e.nspace.assign(proc->nspace, strnlen(proc->nspace, PMIX_MAX_NSLEN));
    e.rank = proc->rank == PMIX_RANK_WILDCARD ? -1 : static_cast<int>(proc->rank);
  }
  return e;
}

void* token_data(uint64_t token) { return reinterpret_cast<void*>(static_cast<uintptr_t>(token)); }
uint64_t token_of(void* data) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data)); }

void op_done(pmix_status_t status, void* cbdata) {
  Event e = event(Event::Kind::done, nullptr);
  e.status = status;
  e.token = token_of(cbdata);
  post(std::move(e));
}

void modex_fetched(pmix_status_t status, char* data, size_t size, void* cbdata) {
  Event e = event(Event::Kind::done, nullptr);
  e.status = status;
  e.token = token_of(cbdata);
  if (status == PMIX_SUCCESS && data) e.text.assign(data, size);
  post(std::move(e));
}

// --- the module: libpmix's thread ---

pmix_status_t on_connected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  post(event(Event::Kind::connected, proc));
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_finalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  Event e = event(Event::Kind::finalized, proc);
  e.completion = {reinterpret_cast<void*>(cbfunc), cbdata};
  post(std::move(e));
  return PMIX_SUCCESS;
}

pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[],
                       size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  Event e = event(Event::Kind::aborted, proc);
  e.status = status;
  if (msg) e.text = msg;
  e.completion = {reinterpret_cast<void*>(cbfunc), cbdata};
  post(std::move(e));
  return PMIX_SUCCESS;
}

pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                       char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  // A fence over some processes only (Open MPI's MPI_Comm_disconnect) is a collective at the
  // launch's head, not the tree fence (names_upcalls.hpp).
  if (nprocs != 1 || procs[0].rank != PMIX_RANK_WILDCARD)
    return on_partial_fence(procs, nprocs, data, ndata, cbfunc, cbdata);
  Event e = event(Event::Kind::fence, &procs[0]);
  if (data) e.text.assign(data, ndata);
  e.completion = {reinterpret_cast<void*>(cbfunc), cbdata};
  post(std::move(e));
  return PMIX_SUCCESS;
}

pmix_status_t on_direct_modex(const pmix_proc_t* proc, const pmix_info_t[], size_t,
                              pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  Event e = event(Event::Kind::modex, proc);
  e.completion = {reinterpret_cast<void*>(cbfunc), cbdata};
  post(std::move(e));
  return PMIX_SUCCESS;
}

pmix_status_t on_spawn(const pmix_proc_t* proc, const pmix_info_t job_info[], size_t ninfo,
                       const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                       void* cbdata) {
  Event e = event(Event::Kind::spawn, proc);
  auto call = spawn_call(job_info, ninfo, apps, napps);
  if (!call) return PMIX_ERR_BAD_PARAM;  // beyond any bound a launch takes
  e.spawn = std::move(call.value());
  e.spawn.rank = e.rank;
  e.spawn.done = {reinterpret_cast<void*>(cbfunc), cbdata};
  post(std::move(e));
  return PMIX_SUCCESS;
}

pmix_server_module_t make_module() {
  pmix_server_module_t m;
  std::memset(&m, 0, sizeof m);
  m.client_connected = on_connected;
  m.client_finalized = on_finalized;
  m.abort = on_abort;
  m.fence_nb = on_fence;
  m.direct_modex = on_direct_modex;
  m.publish = on_publish;
  m.lookup = on_lookup;
  m.unpublish = on_unpublish;
  m.spawn = on_spawn;
  m.connect = on_connect;
  m.disconnect = on_disconnect;
  m.group = on_group;
  add_event_upcalls(m);
  return m;
}

pmix_proc_t proc_of(const std::string& nspace, int rank) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));
  return proc;
}

void release_string(void* data) { delete static_cast<std::string*>(data); }

// `none`: no data, as libpmix wants it where there is none (to a collecting fence an empty
// buffer is one missing its data: gds/base, pmix_gds_base_store_modex).
void answer_with_data(const Completion& done, bool ok, std::string data, bool none = false) {
  auto fn = reinterpret_cast<pmix_modex_cbfunc_t>(done.fn);
  if (!fn) return;
  if (none) return fn(ok ? PMIX_SUCCESS : PMIX_ERROR, nullptr, 0, done.data, nullptr, nullptr);
  auto* held = new std::string(std::move(data));  // libpmix releases it when done
  fn(ok ? PMIX_SUCCESS : PMIX_ERROR, held->data(), held->size(), done.data, release_string, held);
}

std::string status_text(int status) { return PMIx_Error_string(status); }

}  // namespace

void post_names(std::string nspace, NameCall call) {
  Event e = event(Event::Kind::names, nullptr);
  e.nspace = std::move(nspace);
  e.rank = call.rank;
  e.names = std::make_shared<NameCall>(std::move(call));
  post(std::move(e));
}

void post_collective(std::string nspace, CollectiveCall call) {
  Event e = event(Event::Kind::collective, nullptr);
  e.nspace = std::move(nspace);
  e.collective = std::make_shared<CollectiveCall>(std::move(call));
  post(std::move(e));
}

namespace {

class LibpmixServer final : public Server {
 public:
  explicit LibpmixServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
  ~LibpmixServer() override;
  void register_job(const JobLayout& layout, uint32_t uid, uint32_t gid, NamespaceEvents& events,
                    std::function<void(Status)> done) override;
  void setup_local_support(const std::string& nspace, const std::vector<SetupEntry>& entries,
                           std::function<void(Status)> done) override;
  Result<std::vector<std::string>> client_environment(const std::string& nspace, int rank) override;
  void deregister_job(const std::string& nspace) override;
  void drain() override;
  void answer_fence(const FenceCall& call, bool ok, std::string data) override;
  void answer_modex(const RankCall& call, bool ok, std::string data) override;
  void release(const RankCall& call) override;
  void answer_spawn(const SpawnCall& call, const Result<std::string>& nspace) override;
  void answer_names(
      const NameCall& call,
      const Result<std::vector<std::pair<std::string, std::string>>>& found) override {
    answer_names_call(call, found);
  }
  void answer_collective(const CollectiveCall& call, bool ok, std::string data,
                         uint64_t context_id) override {
    answer_collective_call(call, ok, std::move(data), context_id);
  }
  void local_modex(const std::string& nspace, int rank,
                   std::function<void(Result<std::string>)> done) override;
  void notify(const std::string& nspace, const EventNotice& notice,
              std::function<void(Status)> done) override {
    notify_clients(nspace, notice, std::move(done));
  }
  void answer_control(const ControlCall& call, Answer answer) override {
    answer_control_call(call, answer);
  }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace

void post_call(std::string nspace, std::function<void(NamespaceEvents*)> run) {
  Event e = event(Event::Kind::call, nullptr);
  e.nspace = std::move(nspace);
  e.run = std::move(run);
  post(std::move(e));
}

Result<std::unique_ptr<Server>> start_linked(const ServerOptions& options,
                                             std::function<void()> wake) {
  std::lock_guard<std::mutex> global(g_mutex);
  if (g_server) return make_error("a PMIx server is already running in this process");
  // The hash store keeps job data in messages, not in shared-memory files that every job's
  // user would have to reach, and survives a failed registration (docs/pmi-wire.md §7).
  ::setenv("PMIX_MCA_gds", "hash", 1);
  static pmix_server_module_t module = make_module();
  pmix_info_t info[3];
  PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, options.tmpdir.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, options.tmpdir.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[2], PMIX_HOSTNAME, options.hostname.c_str(), PMIX_STRING);
  pmix_status_t rc = PMIx_server_init(&module, info, 3);
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  if (rc != PMIX_SUCCESS) return make_error(cat("PMIx_server_init: ", status_text(rc)));
  auto impl = std::make_unique<Impl>();
  impl->wake = std::move(wake);
  g_server = impl.get();
  return std::unique_ptr<Server>(new LibpmixServer(std::move(impl)));
}

LibpmixServer::~LibpmixServer() {
  {
    std::lock_guard<std::mutex> global(g_mutex);
    g_server = nullptr;  // from here on, module calls are dropped
  }
  // Finalize on a thread of its own so that a hang costs the agent its budget, not its exit.
  auto state = std::make_shared<std::pair<std::mutex, std::condition_variable>>();
  auto finished = std::make_shared<bool>(false);
  std::thread([state, finished] {
    PMIx_server_finalize();
    std::lock_guard<std::mutex> lock(state->first);
    *finished = true;
    state->second.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(state->first);
  if (!state->second.wait_for(lock, kFinalizeBudget, [&] { return *finished; }))
    LAT_LOG(warn, "pmix", "PMIx_server_finalize did not return within ", kFinalizeBudget.count(),
            " s; going on without it");
}

void LibpmixServer::register_job(const JobLayout& layout, uint32_t uid, uint32_t gid,
                                 NamespaceEvents& events, std::function<void(Status)> done) {
  auto job = job_info(layout);
  if (!job) return done(job.error());
  impl_->namespaces[layout.nspace] = &events;

  // One answer for the namespace and one per local client; the first failure is the one said.
  auto local = local_ranks(layout);
  auto one = all_done(local.size() + 1, std::move(done));
  auto held = std::make_shared<JobInfo>(std::move(*job));  // libpmix reads it until it answers
  auto count = [one, held](const std::string& what) {
    return [one, held, what](int status, std::string) {
      if (status != PMIX_SUCCESS && status != PMIX_OPERATION_SUCCEEDED)
        return one(make_error(cat(what, ": ", status_text(status))));
      one({});
    };
  };
  uint64_t token = impl_->expect(layout.nspace, count("PMIx_server_register_nspace"));
  pmix_status_t rc =
      PMIx_server_register_nspace(layout.nspace.c_str(), static_cast<int>(local.size()),
                                  held->info(), held->size(), op_done, token_data(token));
  if (rc != PMIX_SUCCESS) op_done(rc, token_data(token));
  for (int rank : local) {
    pmix_proc_t proc = proc_of(layout.nspace, rank);
    uint64_t t =
        impl_->expect(layout.nspace, count(cat("PMIx_server_register_client (rank ", rank, ")")));
    rc = PMIx_server_register_client(&proc, uid, gid, nullptr, op_done, token_data(t));
    if (rc != PMIX_SUCCESS) op_done(rc, token_data(t));
  }
}

void LibpmixServer::setup_local_support(const std::string& nspace,
                                        const std::vector<SetupEntry>& entries,
                                        std::function<void(Status)> done) {
  auto info = local_support_info(entries);
  if (!info) return done(info.error());
  uint64_t token =
      impl_->expect(nspace, [held = *info, done = std::move(done)](int status, std::string) {
        if (status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED) return done({});
        done(make_error(cat("PMIx_server_setup_local_support: ", status_text(status))));
      });
  pmix_status_t rc = PMIx_server_setup_local_support(nspace.c_str(), (*info)->info(),
                                                     (*info)->size(), op_done, token_data(token));
  if (rc != PMIX_SUCCESS) op_done(rc, token_data(token));
}

Result<std::vector<std::string>> LibpmixServer::client_environment(const std::string& nspace,
                                                                   int rank) {
  pmix_proc_t proc = proc_of(nspace, rank);
  char** env = nullptr;
  pmix_status_t rc = PMIx_server_setup_fork(&proc, &env);
  std::vector<std::string> out;
  for (char** e = env; e && *e; ++e) {
    out.emplace_back(*e);
    std::free(*e);
  }
  std::free(env);
  if (rc != PMIX_SUCCESS) return make_error(cat("PMIx_server_setup_fork: ", status_text(rc)));
  return out;
}

void LibpmixServer::deregister_job(const std::string& nspace) {
  if (impl_->namespaces.erase(nspace) == 0) return;
  // Answers still due for this namespace find nobody waiting (the launch may be gone). Nobody
  // waits for the deregistration either: a hung one holds nothing of ours, and its answer is
  // only logged (filed under no namespace, so no later forget() drops it).
  impl_->forget(nspace);
  uint64_t token = impl_->expect({}, [nspace](int status, std::string) {
    if (status != PMIX_SUCCESS)
      LAT_LOG(warn, "pmix", "deregistering ", nspace, ": ", status_text(status));
  });
  PMIx_server_deregister_nspace(nspace.c_str(), op_done, token_data(token));
}

void LibpmixServer::drain() {
  std::deque<Event> batch;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    batch.swap(impl_->queue);
  }
  for (auto& e : batch) {
    if (e.kind == Event::Kind::done) {
      auto it = impl_->pending.find(e.token);
      if (it == impl_->pending.end()) continue;
      auto fn = std::move(it->second.fn);
      impl_->pending.erase(it);
      fn(e.status, std::move(e.text));
      continue;
    }
    auto it = impl_->namespaces.find(e.nspace);
    if (e.kind == Event::Kind::call) {
      e.run(it == impl_->namespaces.end() ? nullptr : it->second);
      continue;
    }
    if (it == impl_->namespaces.end()) {
      // A namespace that ended (or never was ours): release whoever waits, with an error.
      if (e.kind == Event::Kind::fence || e.kind == Event::Kind::modex)
        answer_with_data(e.completion, false, {});
      else if (e.kind == Event::Kind::spawn)
        answer_spawn(e.spawn, make_error("the launch has ended"));
      else if (e.kind == Event::Kind::aborted || e.kind == Event::Kind::finalized)
        release(RankCall{e.rank, e.completion});
      else if (e.kind == Event::Kind::names)
        answer_names_call(*e.names, make_error("no such namespace"));
      else if (e.kind == Event::Kind::collective)
        answer_collective_call(*e.collective, false, {}, 0);
      continue;
    }
    NamespaceEvents& events = *it->second;
    switch (e.kind) {
      case Event::Kind::connected:
        events.client_connected(e.rank);
        break;
      case Event::Kind::finalized:
        events.client_finalized(RankCall{e.rank, e.completion});
        break;
      case Event::Kind::aborted:
        events.client_aborted(RankCall{e.rank, e.completion}, e.status, std::move(e.text));
        break;
      case Event::Kind::fence:
        events.fence_entered(FenceCall{std::move(e.text), e.completion});
        break;
      case Event::Kind::modex:
        events.modex_requested(RankCall{e.rank, e.completion});
        break;
      case Event::Kind::spawn:
        events.spawn_requested(std::move(e.spawn));
        break;
      case Event::Kind::names:
        events.names_called(std::move(*e.names));
        break;
      case Event::Kind::collective:
        events.collective_entered(std::move(*e.collective));
        break;
      case Event::Kind::done:
      case Event::Kind::call:
        break;
    }
  }
}

void LibpmixServer::answer_fence(const FenceCall& call, bool ok, std::string data) {
  // Nothing new from the other nodes (pmix_blobs.hpp) is a fence answer with no data.
  const bool none = data.empty();
  answer_with_data(call.done, ok, std::move(data), none);
}

void LibpmixServer::answer_modex(const RankCall& call, bool ok, std::string data) {
  answer_with_data(call.done, ok, std::move(data));
}

void LibpmixServer::release(const RankCall& call) {
  if (auto fn = reinterpret_cast<pmix_op_cbfunc_t>(call.done.fn)) fn(PMIX_SUCCESS, call.done.data);
}

void LibpmixServer::answer_spawn(const SpawnCall& call, const Result<std::string>& nspace) {
  auto fn = reinterpret_cast<pmix_spawn_cbfunc_t>(call.done.fn);
  if (!fn) return;
  pmix_nspace_t name;
  PMIX_LOAD_NSPACE(name, nspace ? nspace->c_str() : "");
  fn(nspace ? PMIX_SUCCESS : PMIX_ERR_JOB_FAILED_TO_LAUNCH, name, call.done.data);
}

void LibpmixServer::local_modex(const std::string& nspace, int rank,
                                std::function<void(Result<std::string>)> done) {
  uint64_t token = impl_->expect(nspace, [done, rank](int status, std::string data) {
    if (status != PMIX_SUCCESS)
      return done(make_error(cat("no data for rank ", rank, ": ", status_text(status))));
    done(std::move(data));
  });
  pmix_proc_t proc = proc_of(nspace, rank);
  pmix_status_t rc = PMIx_server_dmodex_request(&proc, modex_fetched, token_data(token));
  if (rc != PMIX_SUCCESS) modex_fetched(rc, nullptr, 0, token_data(token));
}

}  // namespace lattice::pmix
