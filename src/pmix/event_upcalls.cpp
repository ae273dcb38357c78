// Events and job control through libpmix (event_upcalls.hpp): a rank's event whose range goes
// beyond this node, and its job-control requests, copied into plain values for the loop; events
// from other nodes handed back to libpmix for this node's clients, with their source.
#include "pmix/event_upcalls.hpp"

#include <pmix.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "pmix/names_upcalls.hpp"

namespace lattice::pmix {

static_assert(static_cast<uint8_t>(EventRange::custom) == PMIX_RANGE_CUSTOM);
static_assert(static_cast<uint8_t>(EventRange::proc_local) == PMIX_RANGE_PROC_LOCAL);
static_assert(static_cast<uint8_t>(EventRange::local) == PMIX_RANGE_LOCAL);
static_assert(kRankWildcard == PMIX_RANK_WILDCARD);
static_assert(kProcAborted == PMIX_ERR_PROC_ABORTED);
static_assert(kTypeInt == PMIX_INT && kTypeProc == PMIX_PROC && kTypeDataArray == PMIX_DATA_ARRAY);
static_assert(std::string_view(kAffectedProc) == PMIX_EVENT_AFFECTED_PROC);
static_assert(std::string_view(kExitCode) == PMIX_EXIT_CODE);
// agent/pmix_events.cpp's keys.
static_assert(std::string_view("pmix.evrange") == PMIX_EVENT_CUSTOM_RANGE);
static_assert(std::string_view("pmix.jctrl.kill") == PMIX_JOB_CTRL_KILL);
static_assert(std::string_view("pmix.jctrl.sig") == PMIX_JOB_CTRL_SIGNAL);
static_assert(std::string_view("pmix.jctrl.term") == PMIX_JOB_CTRL_TERMINATE);
static_assert(std::string_view("pmix.jctrl.id") == PMIX_JOB_CTRL_ID);

namespace {

// libpmix's mark on an event a client sent its server (src/event/pmix_event.h, not installed
// as API), its guard against a client echoing the event back: it stays on the raising node.
constexpr const char* kInternalNotify = "pmix.srvr.internal.notify";

std::string bounded(const char* s, size_t max) { return s ? std::string(s, strnlen(s, max)) : ""; }

ProcId proc_id(const pmix_proc_t& p) { return ProcId{bounded(p.nspace, PMIX_MAX_NSLEN), p.rank}; }

// An integer of one of these types travels as int64 and comes back as its own type.
bool integer_type(pmix_data_type_t t) {
  switch (t) {
    case PMIX_INT:
    case PMIX_INT8:
    case PMIX_INT16:
    case PMIX_INT32:
    case PMIX_INT64:
    case PMIX_UINT:
    case PMIX_UINT8:
    case PMIX_UINT16:
    case PMIX_UINT32:
    case PMIX_UINT64:
    case PMIX_SIZE:
    case PMIX_PID:
    case PMIX_STATUS:
    case PMIX_PROC_RANK:
      return true;
    default:
      return false;
  }
}

int64_t integer_of(const pmix_value_t& v) {
  switch (v.type) {
    case PMIX_INT:
      return v.data.integer;
    case PMIX_INT8:
      return v.data.int8;
    case PMIX_INT16:
      return v.data.int16;
    case PMIX_INT32:
      return v.data.int32;
    case PMIX_INT64:
      return v.data.int64;
    case PMIX_UINT:
      return v.data.uint;
    case PMIX_UINT8:
      return v.data.uint8;
    case PMIX_UINT16:
      return v.data.uint16;
    case PMIX_UINT32:
      return v.data.uint32;
    case PMIX_UINT64:
      return static_cast<int64_t>(v.data.uint64);
    case PMIX_SIZE:
      return static_cast<int64_t>(v.data.size);
    case PMIX_PID:
      return v.data.pid;
    case PMIX_STATUS:
      return v.data.status;
    case PMIX_PROC_RANK:
      return v.data.rank;
    default:
      return 0;
  }
}

void set_integer(pmix_value_t& v, pmix_data_type_t type, int64_t n) {
  v.type = type;
  switch (type) {
    case PMIX_INT:
      v.data.integer = static_cast<int>(n);
      break;
    case PMIX_INT8:
      v.data.int8 = static_cast<int8_t>(n);
      break;
    case PMIX_INT16:
      v.data.int16 = static_cast<int16_t>(n);
      break;
    case PMIX_INT32:
      v.data.int32 = static_cast<int32_t>(n);
      break;
    case PMIX_INT64:
      v.data.int64 = n;
      break;
    case PMIX_UINT:
      v.data.uint = static_cast<unsigned>(n);
      break;
    case PMIX_UINT8:
      v.data.uint8 = static_cast<uint8_t>(n);
      break;
    case PMIX_UINT16:
      v.data.uint16 = static_cast<uint16_t>(n);
      break;
    case PMIX_UINT32:
      v.data.uint32 = static_cast<uint32_t>(n);
      break;
    case PMIX_UINT64:
      v.data.uint64 = static_cast<uint64_t>(n);
      break;
    case PMIX_SIZE:
      v.data.size = static_cast<size_t>(n);
      break;
    case PMIX_PID:
      v.data.pid = static_cast<pid_t>(n);
      break;
    case PMIX_STATUS:
      v.data.status = static_cast<pmix_status_t>(n);
      break;
    case PMIX_PROC_RANK:
      v.data.rank = static_cast<pmix_rank_t>(n);
      break;
    default:
      v.type = PMIX_UNDEF;
  }
}

// The carried values of `info` (bounded; libpmix's own marker and other types left out).
std::vector<InfoValue> values_of(const pmix_info_t info[], size_t ninfo) {
  std::vector<InfoValue> out;
  size_t dropped = 0;
  for (size_t n = 0; n < ninfo; ++n) {
    const pmix_info_t& i = info[n];
    if (PMIX_CHECK_KEY(&i, kInternalNotify)) continue;
    if (out.size() == kMaxEventInfos) {
      ++dropped;
      continue;
    }
    InfoValue v;
    v.key = bounded(i.key, PMIX_MAX_KEYLEN);
    v.pmix_type = i.value.type;
    const pmix_data_type_t t = i.value.type;
    if (t == PMIX_BOOL) {
      v.kind = InfoValue::Kind::flag;
      v.number = i.value.data.flag ? 1 : 0;
    } else if (integer_type(t)) {
      v.kind = InfoValue::Kind::integer;
      v.number = integer_of(i.value);
    } else if (t == PMIX_STRING) {
      v.kind = InfoValue::Kind::text;
      v.text = bounded(i.value.data.string, kMaxEventText);
    } else if (t == PMIX_PROC && i.value.data.proc) {
      v.kind = InfoValue::Kind::procs;
      v.procs.push_back(proc_id(*i.value.data.proc));
    } else if (t == PMIX_DATA_ARRAY && i.value.data.darray &&
               i.value.data.darray->type == PMIX_PROC &&
               i.value.data.darray->size <= kMaxEventProcs) {
      v.kind = InfoValue::Kind::procs;
      auto* procs = static_cast<const pmix_proc_t*>(i.value.data.darray->array);
      for (size_t p = 0; p < i.value.data.darray->size; ++p) v.procs.push_back(proc_id(procs[p]));
    } else {
      ++dropped;
      continue;
    }
    out.push_back(std::move(v));
  }
  if (dropped) LAT_LOG(debug, "pmix", dropped, " info values of an event or directive not carried");
  return out;
}

// An info array for libpmix, kept until libpmix is done with it.
struct InfoArray {
  pmix_info_t* info = nullptr;
  size_t ninfo = 0;
  explicit InfoArray(const std::vector<InfoValue>& values) {
    ninfo = values.size();
    if (ninfo) PMIX_INFO_CREATE(info, ninfo);
    for (size_t n = 0; n < ninfo; ++n) {
      const InfoValue& v = values[n];
      pmix_info_t& i = info[n];
      PMIX_LOAD_KEY(i.key, v.key.c_str());
      switch (v.kind) {
        case InfoValue::Kind::flag: {
          bool flag = v.number != 0;
          PMIX_VALUE_LOAD(&i.value, &flag, PMIX_BOOL);
          break;
        }
        case InfoValue::Kind::integer:
          set_integer(i.value, integer_type(v.pmix_type) ? v.pmix_type : PMIX_INT64, v.number);
          break;
        case InfoValue::Kind::text:
          PMIX_VALUE_LOAD(&i.value, v.text.c_str(), PMIX_STRING);
          break;
        case InfoValue::Kind::procs: {
          std::vector<pmix_proc_t> procs(v.procs.size());
          for (size_t p = 0; p < procs.size(); ++p)
            PMIX_LOAD_PROCID(&procs[p], v.procs[p].nspace.c_str(), v.procs[p].rank);
          if (v.pmix_type == PMIX_PROC && procs.size() == 1) {
            PMIX_VALUE_LOAD(&i.value, procs.data(), PMIX_PROC);
          } else {
            pmix_data_array_t array;
            array.type = PMIX_PROC;
            array.size = procs.size();
            array.array = procs.data();
            PMIX_VALUE_LOAD(&i.value, &array, PMIX_DATA_ARRAY);  // copies the procs
          }
          break;
        }
      }
    }
  }
  ~InfoArray() {
    if (info) PMIX_INFO_FREE(info, ninfo);
  }
  InfoArray(const InfoArray&) = delete;
  InfoArray& operator=(const InfoArray&) = delete;
};

struct Notifying {
  std::unique_ptr<InfoArray> info;
  std::function<void(Status)> done;
};

void notified(pmix_status_t status, void* cbdata) {
  auto* held = static_cast<Notifying*>(cbdata);
  // Back on the loop: the callback is the owner's, and so is freeing what it holds.
  post_call({}, [held, status](NamespaceEvents*) {
    std::unique_ptr<Notifying> owned(held);
    if (owned->done)
      owned->done(status == PMIX_SUCCESS || status == PMIX_OPERATION_SUCCEEDED
                      ? Status{}
                      : Status(make_error(cat("PMIx_Notify_event: ", PMIx_Error_string(status)))));
  });
}

// --- the module: libpmix's thread ---

pmix_status_t on_notify_event(pmix_status_t code, const pmix_proc_t* source,
                              pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                              pmix_op_cbfunc_t, void*) {
  if (!source) return PMIX_ERR_BAD_PARAM;
  EventNotice notice;
  notice.code = code;
  notice.source_rank = source->rank;
  notice.range = range;
  notice.info = values_of(info, ninfo);
  post_call(bounded(source->nspace, PMIX_MAX_NSLEN),
            [notice = std::move(notice)](NamespaceEvents* events) mutable {
              if (events) events->event_raised(std::move(notice));
            });
  // Delivered here already; the other nodes' delivery is not waited for (as PMIx allows).
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t on_job_control(const pmix_proc_t* requestor, const pmix_proc_t targets[],
                             size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                             pmix_info_cbfunc_t cbfunc, void* cbdata) {
  if (!requestor) return PMIX_ERR_BAD_PARAM;
  if (ntargets > kMaxEventProcs) return PMIX_ERR_BAD_PARAM;
  ControlCall call;
  call.requester = static_cast<int>(requestor->rank);
  for (size_t n = 0; n < ntargets; ++n) call.targets.push_back(proc_id(targets[n]));
  call.directives = values_of(directives, ndirs);
  call.done = {reinterpret_cast<void*>(cbfunc), cbdata};
  post_call(bounded(requestor->nspace, PMIX_MAX_NSLEN),
            [call = std::move(call)](NamespaceEvents* events) mutable {
              if (events)
                events->control_asked(std::move(call));
              else
                answer_control_call(call, Answer::error);
            });
  return PMIX_SUCCESS;
}

// What this agent answers of PMIx_Query_info: the same for every asker. The spawn attributes
// PMIx_Spawn honours (pmi-wire.md §7.4); no debugger attribute.
const std::pair<const char*, const char*> kCapabilities[] = {
    {PMIX_QUERY_SPAWN_SUPPORT, PMIX_HOST "," PMIX_WDIR},
    {PMIX_QUERY_DEBUG_SUPPORT, ""},
};

const char* capability(const char* key) {
  for (const auto& [name, value] : kCapabilities)
    if (std::strcmp(key, name) == 0) return value;
  return nullptr;
}

// libpmix 4.2.2 hands its host a client's PMIx_Query_info under the server's own name
// (src/common/pmix_query.c), so the asking rank, and its user, are unknown: a proc table or a
// namespace list would show one user's processes to another. Only what is the same for every
// asker is answered (the agent's capabilities); anything else is refused at once (without a
// `query` upcall libpmix would answer PMIX_ERR_UNREACH, which reads as a broken server).
pmix_status_t on_query(pmix_proc_t*, pmix_query_t* queries, size_t nqueries,
                       pmix_info_cbfunc_t cbfunc, void* cbdata) {
  std::vector<std::pair<const char*, const char*>> answers;
  for (size_t q = 0; q < nqueries; ++q)
    for (char** key = queries[q].keys; key && *key; ++key) {
      const char* value = capability(*key);
      if (!value) {
        static std::once_flag said;
        std::call_once(said, [] {
          LAT_LOG(info, "pmix",
                  "PMIx_Query_info of more than the agent's capabilities refused: libpmix does not "
                  "tell its host which rank asks (said once)");
        });
        return PMIX_ERR_NOT_SUPPORTED;
      }
      answers.emplace_back(*key, value);
    }
  if (answers.empty()) return PMIX_ERR_BAD_PARAM;
  pmix_info_t* info;
  PMIX_INFO_CREATE(info, answers.size());
  for (size_t i = 0; i < answers.size(); ++i)
    PMIX_INFO_LOAD(&info[i], answers[i].first, answers[i].second, PMIX_STRING);
  cbfunc(PMIX_SUCCESS, info, answers.size(), cbdata, release_info_array,
         new std::pair<pmix_info_t*, size_t>(info, answers.size()));
  return PMIX_SUCCESS;
}

pmix_status_t status_of(Answer answer) {
  switch (answer) {
    case Answer::success:
      return PMIX_SUCCESS;
    case Answer::not_supported:
      return PMIX_ERR_NOT_SUPPORTED;
    case Answer::bad_param:
      return PMIX_ERR_BAD_PARAM;
    case Answer::not_found:
      return PMIX_ERR_NOT_FOUND;
    case Answer::error:
      return PMIX_ERROR;
  }
  return PMIX_ERROR;
}

}  // namespace

void add_event_upcalls(pmix_server_module_t& module) {
  module.notify_event = on_notify_event;
  module.job_control = on_job_control;
  module.query = on_query;
}

void notify_clients(const std::string& nspace, const EventNotice& notice,
                    std::function<void(Status)> done) {
  auto held = std::make_unique<Notifying>();
  held->info = std::make_unique<InfoArray>(notice.info);
  held->done = std::move(done);
  pmix_proc_t source;
  PMIX_LOAD_PROCID(&source, nspace.c_str(), notice.source_rank);
  InfoArray& info = *held->info;
  Notifying* raw = held.release();
  pmix_status_t rc =
      PMIx_Notify_event(notice.code, &source, static_cast<pmix_data_range_t>(notice.range),
                        info.info, info.ninfo, notified, raw);
  if (rc != PMIX_SUCCESS) notified(rc, raw);  // no callback comes then
}

void answer_control_call(const ControlCall& call, Answer answer) {
  if (auto fn = reinterpret_cast<pmix_info_cbfunc_t>(call.done.fn))
    fn(status_of(answer), nullptr, 0, call.done.data, nullptr, nullptr);
}

}  // namespace lattice::pmix
