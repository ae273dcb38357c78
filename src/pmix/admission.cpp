#include "pmix/admission.hpp"

#include <algorithm>

#include "base/strings.hpp"

namespace lattice::pmix {
namespace {

// What libpmix 4.2's server can serve: every buffer module it is built with, and the one
// storage module the agent leaves it (PMIX_MCA_gds=hash, pmix/server.cpp). A name it lacks
// makes it refuse the client after its rank is looked up (see admission.hpp).
bool known_bfrops(const std::string& name) {
  for (const char* k : {"v12", "v20", "v21", "v3", "v4", "v41"})
    if (name == k) return true;
  return false;
}

}  // namespace

bool may_connect(uint32_t socket_uid, const Registry& registry) {
  return socket_uid == 0 || std::any_of(registry.begin(), registry.end(), [&](const auto& entry) {
           return entry.second.uid == socket_uid;
         });
}

Status admit(const ClientHello& hello, uint32_t socket_uid, const Registry& registry) {
  auto ns = registry.find(hello.nspace);
  if (ns == registry.end())
    return make_error(cat("uid ", socket_uid, " asked for namespace '", hello.nspace,
                          "', which is not a launch of this node"));
  const RegisteredNamespace& job = ns->second;
  if (socket_uid != job.uid && socket_uid != 0)
    return make_error(cat("uid ", socket_uid, " posed as rank ", hello.rank, " of ", hello.nspace,
                          ", which runs as uid ", job.uid));
  if (job.local_ranks.count(static_cast<int>(hello.rank)) == 0)
    return make_error(cat("uid ", socket_uid, " asked for rank ", hello.rank, " of ", hello.nspace,
                          ", which is not one of this node's"));
  if (hello.psec != "native")
    return make_error(cat("uid ", socket_uid, " used PMIx security '", hello.psec,
                          "' (the ranks are given 'native')"));
  auto claimed = native_credential(hello.credential);
  if (!claimed) return make_error(cat("uid ", socket_uid, ": ", claimed.error().message));
  if (claimed->uid != job.uid || claimed->gid != job.gid)
    return make_error(cat("uid ", socket_uid, " claimed uid ", claimed->uid, " gid ", claimed->gid,
                          " for ", hello.nspace, ", registered as ", job.uid, ":", job.gid));
  if (!hello.bfrops.empty() && !known_bfrops(hello.bfrops))
    return make_error(cat("uid ", socket_uid, " named PMIx buffer module '", hello.bfrops, "'"));
  if (!hello.bfrops.empty() && hello.gds != "hash")
    return make_error(cat("uid ", socket_uid, " named PMIx storage module '", hello.gds,
                          "' (the server keeps 'hash')"));
  return {};
}

}  // namespace lattice::pmix
