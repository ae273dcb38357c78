// Inside lattice-pmix.so: libpmix's publish, lookup, unpublish, connect and disconnect upcalls,
// and fences over some procs only, turned into plain values (server.hpp's NameCall and
// CollectiveCall) on libpmix's thread; and their answers back to libpmix. server.cpp queues the
// values for the owner's loop, like every other upcall.
#pragma once

#include <pmix_server.h>

#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "pmix/server.hpp"

namespace lattice::pmix {

// Defined in server.cpp: hands a call to the loop, for the namespace `nspace`.
void post_names(std::string nspace, NameCall call);
void post_collective(std::string nspace, CollectiveCall call);

// At most this many names in one request (Open MPI publishes and looks up one at a time).
inline constexpr size_t kMaxNamesPerCall = 64;

pmix_status_t on_publish(const pmix_proc_t* proc, const pmix_info_t info[], size_t ninfo,
                         pmix_op_cbfunc_t cbfunc, void* cbdata);
pmix_status_t on_lookup(const pmix_proc_t* proc, char** keys, const pmix_info_t info[],
                        size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void* cbdata);
pmix_status_t on_unpublish(const pmix_proc_t* proc, char** keys, const pmix_info_t info[],
                           size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata);
pmix_status_t on_connect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                         size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata);
pmix_status_t on_disconnect(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                            size_t ninfo, pmix_op_cbfunc_t cbfunc, void* cbdata);
// PMIx_Group_construct / _destruct (RFC0003): a collective like PMIx_Connect's, carrying the
// members' endpoint data libpmix collected; other operations are not libpmix 4.2.2's to ask.
pmix_status_t on_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                       size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                       pmix_info_cbfunc_t cbfunc, void* cbdata);
// A fence whose participants are not one whole namespace.
pmix_status_t on_partial_fence(const pmix_proc_t procs[], size_t nprocs, const char* data,
                               size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata);

// A pmix_release_cbfunc_t for an answer's info array made with PMIX_INFO_CREATE: `data` is a
// new std::pair<pmix_info_t*, size_t> of it.
void release_info_array(void* data);

void answer_names_call(const NameCall& call,
                       const Result<std::vector<std::pair<std::string, std::string>>>& found);
void answer_collective_call(const CollectiveCall& call, bool ok, std::string data,
                            uint64_t context_id);

}  // namespace lattice::pmix
