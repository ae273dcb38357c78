#include "pmix/names_upcalls.hpp"

#include <pmix.h>

#include <cstring>
#include <string>

namespace lattice::pmix {
namespace {

// Namespaces longer than this come from no client of ours (PMIX_MAX_NSLEN).
std::string nspace_of(const pmix_proc_t& proc) {
  return std::string(proc.nspace, strnlen(proc.nspace, PMIX_MAX_NSLEN));
}

int rank_of(const pmix_proc_t& proc) {
  return proc.rank == PMIX_RANK_WILDCARD ? -1 : static_cast<int>(proc.rank);
}

NameCall::Scope scope_of(pmix_data_range_t range) {
  switch (range) {
    case PMIX_RANGE_LOCAL:
      return NameCall::Scope::node;
    case PMIX_RANGE_NAMESPACE:
      return NameCall::Scope::nspace;
    case PMIX_RANGE_PROC_LOCAL:
      return NameCall::Scope::proc;
    default:  // RM, session, global, custom, undefined: the launch is the session
      return NameCall::Scope::launch;
  }
}

// The directives this host honours or may ignore; any other key of a publish is a name.
bool directive(const pmix_info_t& info, NameCall& call) {
  if (PMIX_CHECK_KEY(&info, PMIX_RANGE)) {
    if (info.value.type == PMIX_DATA_RANGE) call.scope = scope_of(info.value.data.range);
    return true;
  }
  if (PMIX_CHECK_KEY(&info, PMIX_PERSISTENCE)) {
    // Every other persistence ends with the launch, which holds the names (pmi-wire.md §7).
    if (info.value.type == PMIX_PERSIST)
      call.first_read = info.value.data.persist == PMIX_PERSIST_FIRST_READ;
    return true;
  }
  if (PMIX_CHECK_KEY(&info, PMIX_WAIT)) {
    // A bool, or how many of the keys to wait for: this host waits for all of them.
    if (info.value.type == PMIX_BOOL)
      call.wait = info.value.data.flag;
    else if (info.value.type == PMIX_INT)
      call.wait = info.value.data.integer != 0;
    else if (info.value.type == PMIX_SIZE)
      call.wait = info.value.data.size != 0;
    return true;
  }
  if (PMIX_CHECK_KEY(&info, PMIX_TIMEOUT)) {
    if (info.value.type == PMIX_INT && info.value.data.integer > 0)
      call.timeout_s = static_cast<uint32_t>(info.value.data.integer);
    return true;
  }
  return PMIX_CHECK_KEY(&info, PMIX_USERID) || PMIX_CHECK_KEY(&info, PMIX_GRPID);
}

std::vector<ProcRef> procs_of(const pmix_proc_t procs[], size_t nprocs) {
  std::vector<ProcRef> out;
  out.reserve(nprocs);
  for (size_t i = 0; i < nprocs; ++i) out.push_back({nspace_of(procs[i]), rank_of(procs[i])});
  return out;
}

pmix_status_t collective(CollectiveCall::Kind kind, const pmix_proc_t procs[], size_t nprocs,
                         Completion done, std::string data, std::string group = {}) {
  if (nprocs == 0 || !procs) return PMIX_ERR_BAD_PARAM;
  CollectiveCall call;
  call.kind = kind;
  call.procs = procs_of(procs, nprocs);
  call.data = std::move(data);
  call.group = std::move(group);
  call.done = done;
  std::string nspace = call.procs.front().nspace;
  post_collective(std::move(nspace), std::move(call));
  return PMIX_SUCCESS;
}

void release_string(void* data) { delete static_cast<std::string*>(data); }

// A published value as the name service holds it: a byte naming its type, then its bytes.
// Open MPI publishes strings (ports, its lists of participants) and byte objects (its context
// ids); other types are refused rather than held in a form a lookup could not give back.
constexpr char kString = 's';
constexpr char kBytes = 'b';

bool encode_value(const pmix_value_t& v, std::string& out) {
  if (v.type == PMIX_STRING && v.data.string) {
    out = kString + std::string(v.data.string);
    return true;
  }
  if (v.type == PMIX_BYTE_OBJECT) {
    out = kBytes + std::string(v.data.bo.bytes ? v.data.bo.bytes : "", v.data.bo.size);
    return true;
  }
  return false;
}

void load_value(pmix_value_t& v, const std::string& held) {
  if (!held.empty() && held[0] == kBytes) {
    pmix_byte_object_t bo;
    bo.bytes = const_cast<char*>(held.data() + 1);
    bo.size = held.size() - 1;
    PMIX_VALUE_LOAD(&v, &bo, PMIX_BYTE_OBJECT);  // copied
    return;
  }
  std::string text = held.empty() ? std::string() : held.substr(1);
  PMIX_VALUE_LOAD(&v, text.c_str(), PMIX_STRING);
}

}  // namespace

pmix_status_t on_publish(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo,
                         pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (!proc) return PMIX_ERR_BAD_PARAM;
  NameCall call;
  call.op = NameCall::Op::publish;
  call.rank = rank_of(*proc);
  for (size_t i = 0; i < ninfo; ++i) {
    if (directive(info[i], call)) continue;
    std::string key(info[i].key, strnlen(info[i].key, PMIX_MAX_KEYLEN));
    std::string value;
    if (!encode_value(info[i].value, value)) {
      call.refused = "PMIx_Publish of '" + key + "': values of type " +
                     PMIx_Data_type_string(info[i].value.type) +
                     " are not supported (strings and byte objects are)";
      break;
    }
    if (call.names.size() >= kMaxNamesPerCall) {
      call.refused = "PMIx_Publish of more than " + std::to_string(kMaxNamesPerCall) + " names";
      break;
    }
    call.names.emplace_back(std::move(key), std::move(value));
  }
  if (call.names.empty() && call.refused.empty()) call.refused = "PMIx_Publish of no name";
  call.done = {reinterpret_cast<void*>(cbfunc), cbdata};
  post_names(nspace_of(*proc), std::move(call));
  return PMIX_SUCCESS;
}

pmix_status_t on_lookup(const pmix_proc_t* proc, char** keys, const pmix_info_t info[],
                        size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void* cbdata) {
  if (!proc || !keys || !keys[0]) return PMIX_ERR_BAD_PARAM;
  NameCall call;
  call.op = NameCall::Op::lookup;
  call.rank = rank_of(*proc);
  for (size_t i = 0; i < ninfo; ++i) directive(info[i], call);
  for (char** k = keys; *k && call.refused.empty(); ++k) {
    if (call.names.size() >= kMaxNamesPerCall)
      call.refused = "PMIx_Lookup of more than " + std::to_string(kMaxNamesPerCall) + " names";
    else
      call.names.emplace_back(*k, std::string());
  }
  call.done = {reinterpret_cast<void*>(cbfunc), cbdata};
  post_names(nspace_of(*proc), std::move(call));
  return PMIX_SUCCESS;
}

pmix_status_t on_unpublish(const pmix_proc_t* proc, char** keys, const pmix_info_t info[],
                           size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  if (!proc) return PMIX_ERR_BAD_PARAM;
  NameCall call;
  call.op = NameCall::Op::unpublish;
  call.rank = rank_of(*proc);
  for (size_t i = 0; i < ninfo; ++i) directive(info[i], call);
  for (char** k = keys; k && *k && call.refused.empty(); ++k) {
    if (call.names.size() >= kMaxNamesPerCall)
      call.refused = "PMIx_Unpublish of more than " + std::to_string(kMaxNamesPerCall) + " names";
    else
      call.names.emplace_back(*k, std::string());
  }
  call.done = {reinterpret_cast<void*>(cbfunc), cbdata};
  post_names(nspace_of(*proc), std::move(call));
  return PMIX_SUCCESS;
}

pmix_status_t on_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                         pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return collective(CollectiveCall::Kind::connect, procs, nprocs,
                    {reinterpret_cast<void*>(cbfunc), cbdata}, {});
}

pmix_status_t on_disconnect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                            pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return collective(CollectiveCall::Kind::disconnect, procs, nprocs,
                    {reinterpret_cast<void*>(cbfunc), cbdata}, {});
}

pmix_status_t on_partial_fence(const pmix_proc_t procs[], size_t nprocs, const char* data,
                               size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  return collective(CollectiveCall::Kind::fence, procs, nprocs,
                    {reinterpret_cast<void*>(cbfunc), cbdata},
                    data ? std::string(data, ndata) : std::string());
}

void answer_names_call(const NameCall& call,
                       const Result<std::vector<std::pair<std::string, std::string>>>& found) {
  if (call.op != NameCall::Op::lookup) {
    if (auto fn = reinterpret_cast<pmix_op_cbfunc_t>(call.done.fn))
      fn(found ? PMIX_SUCCESS : PMIX_ERROR, call.done.data);
    return;
  }
  auto fn = reinterpret_cast<pmix_lookup_cbfunc_t>(call.done.fn);
  if (!fn) return;
  if (!found || found.value().empty()) return fn(PMIX_ERR_NOT_FOUND, nullptr, 0, call.done.data);
  const auto& names = found.value();
  // libpmix packs the answer before it returns: these may go right after.
  std::vector<pmix_pdata_t> data(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    PMIX_PDATA_CONSTRUCT(&data[i]);
    PMIX_LOAD_KEY(data[i].key, names[i].first.c_str());
    data[i].proc.rank = PMIX_RANK_UNDEF;  // the publisher is not kept
    load_value(data[i].value, names[i].second);
  }
  fn(PMIX_SUCCESS, data.data(), data.size(), call.done.data);
  for (auto& d : data) PMIX_PDATA_DESTRUCT(&d);
}

void release_info_array(void* data) {
  auto* held = static_cast<std::pair<pmix_info_t*, size_t>*>(data);
  PMIX_INFO_FREE(held->first, held->second);
  delete held;
}

namespace {

// A group's answer: its context id and its members' endpoint data, which libpmix stores for
// each member (pmix_server_ops.c, _grpcbfunc); the array lives until libpmix releases it.
void answer_group(const CollectiveCall& call, bool ok, const std::string& data,
                  uint64_t context_id) {
  auto fn = reinterpret_cast<pmix_info_cbfunc_t>(call.done.fn);
  if (!fn) return;
  if (!ok) return fn(PMIX_ERROR, nullptr, 0, call.done.data, nullptr, nullptr);
  size_t n = (context_id ? 1 : 0) + (data.empty() ? 0 : 1);
  if (n == 0) return fn(PMIX_SUCCESS, nullptr, 0, call.done.data, nullptr, nullptr);
  pmix_info_t* info;
  PMIX_INFO_CREATE(info, n);
  size_t i = 0;
  if (context_id) {
    size_t id = context_id;
    PMIX_INFO_LOAD(&info[i++], PMIX_GROUP_CONTEXT_ID, &id, PMIX_SIZE);
  }
  if (!data.empty()) {
    pmix_byte_object_t bo;
    bo.bytes = const_cast<char*>(data.data());
    bo.size = data.size();
    PMIX_INFO_LOAD(&info[i++], PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);  // copies
  }
  fn(PMIX_SUCCESS, info, n, call.done.data, release_info_array,
     new std::pair<pmix_info_t*, size_t>(info, n));
}

}  // namespace

pmix_status_t on_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                       size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                       pmix_info_cbfunc_t cbfunc, void* cbdata) {
  // Refusing would leave the node's other members waiting (libpmix answers only the last one):
  // answer every call, with an error if need be.
  std::string name = grp ? std::string(grp, ::strnlen(grp, PMIX_MAX_NSLEN + 1)) : std::string();
  bool bad = name.empty() || name.size() > PMIX_MAX_NSLEN ||
             (op != PMIX_GROUP_CONSTRUCT && op != PMIX_GROUP_DESTRUCT);
  if (bad || nprocs == 0 || !procs) {
    cbfunc(PMIX_ERR_BAD_PARAM, nullptr, 0, cbdata, nullptr, nullptr);
    return PMIX_SUCCESS;
  }
  std::string endpoints;
  for (size_t i = 0; i < ndirs; ++i)
    if (PMIX_CHECK_KEY(&directives[i], PMIX_GROUP_ENDPT_DATA) &&
        directives[i].value.type == PMIX_BYTE_OBJECT && directives[i].value.data.bo.bytes)
      endpoints.assign(directives[i].value.data.bo.bytes, directives[i].value.data.bo.size);
  return collective(op == PMIX_GROUP_CONSTRUCT ? CollectiveCall::Kind::group_construct
                                               : CollectiveCall::Kind::group_destruct,
                    procs, nprocs, {reinterpret_cast<void*>(cbfunc), cbdata}, std::move(endpoints),
                    std::move(name));
}

void answer_collective_call(const CollectiveCall& call, bool ok, std::string data,
                            uint64_t context_id) {
  switch (call.kind) {
    case CollectiveCall::Kind::group_construct:
    case CollectiveCall::Kind::group_destruct:
      return answer_group(call, ok, data, context_id);
    case CollectiveCall::Kind::connect:
    case CollectiveCall::Kind::disconnect:
      if (auto fn = reinterpret_cast<pmix_op_cbfunc_t>(call.done.fn))
        fn(ok ? PMIX_SUCCESS : PMIX_ERROR, call.done.data);
      return;
    case CollectiveCall::Kind::fence:
      break;
  }
  auto fn = reinterpret_cast<pmix_modex_cbfunc_t>(call.done.fn);
  if (!fn) return;
  auto* held = new std::string(std::move(data));  // libpmix releases it when done
  fn(ok ? PMIX_SUCCESS : PMIX_ERROR, held->data(), held->size(), call.done.data, release_string,
     held);
}

}  // namespace lattice::pmix
