// job_info: libpmix's info list API builds the arrays (it deep-copies what is added), so
// nothing here hand-fills pmix_value_t unions.
#include "pmix/job_info.hpp"

#include <pmix.h>
#include <pmix_server.h>

#include <cstdlib>
#include <string>

#include "base/strings.hpp"

namespace lattice::pmix {
namespace {

// A libpmix info list, released when it goes out of scope.
class InfoList {
 public:
  InfoList() : list_(PMIx_Info_list_start()) {}
  ~InfoList() { PMIx_Info_list_release(list_); }
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;

  void add(const char* key, const void* value, pmix_data_type_t type) {
    if (ok_ && PMIx_Info_list_add(list_, key, value, type) != PMIX_SUCCESS) ok_ = false;
  }
  void add_u32(const char* key, uint32_t value) { add(key, &value, PMIX_UINT32); }
  void add_u16(const char* key, uint16_t value) { add(key, &value, PMIX_UINT16); }
  void add_text(const char* key, const std::string& value) { add(key, value.c_str(), PMIX_STRING); }
  Status convert(pmix_data_array_t* out) {
    if (!ok_ || PMIx_Info_list_convert(list_, out) != PMIX_SUCCESS)
      return make_error("cannot build PMIx job information");
    return {};
  }

 private:
  void* list_;
  bool ok_ = true;
};

// libpmix's encodings of "n0,n1" and "0,1;2,3"; `kind` names the key for errors.
Result<std::string> regex(pmix_status_t (*generate)(const char*, char**), const std::string& input,
                          const char* kind) {
  char* out = nullptr;
  pmix_status_t rc = generate(input.c_str(), &out);
  if (rc != PMIX_SUCCESS || !out) return make_error(cat("cannot encode the ", kind, " for PMIx"));
  std::string encoded(out);
  std::free(out);
  return encoded;
}

}  // namespace

std::vector<int> local_ranks(const JobLayout& layout) {
  std::vector<int> out;
  for (size_t r = 0; r < layout.rank_nodes.size(); ++r)
    if (layout.rank_nodes[r] == layout.this_node) out.push_back(static_cast<int>(r));
  return out;
}

Result<JobInfo> job_info(const JobLayout& layout) {
  const int nnodes = static_cast<int>(layout.nodes.size());
  const auto world = static_cast<uint32_t>(layout.rank_nodes.size());
  if (nnodes == 0 || world == 0 || layout.this_node < -1 || layout.this_node >= nnodes)
    return make_error("PMIx job layout without nodes, ranks or this node");
  if (!layout.appnums.empty() && layout.appnums.size() != world)
    return make_error("PMIx job layout: one app number per rank");

  // Per node: its ranks in order, which gives each rank's local (= node) rank.
  std::vector<std::vector<int>> node_ranks(static_cast<size_t>(nnodes));
  std::vector<uint16_t> local_rank(world);
  for (uint32_t r = 0; r < world; ++r) {
    int node = layout.rank_nodes[r];
    if (node < 0 || node >= nnodes) return make_error("PMIx job layout: rank on an unknown node");
    auto& ranks = node_ranks[static_cast<size_t>(node)];
    local_rank[r] = static_cast<uint16_t>(ranks.size());
    ranks.push_back(static_cast<int>(r));
  }
  std::string hosts, procs;
  for (int n = 0; n < nnodes; ++n) {
    hosts += (n ? "," : "") + layout.nodes[static_cast<size_t>(n)];
    std::string list;
    for (int r : node_ranks[static_cast<size_t>(n)])
      list += (list.empty() ? "" : ",") + std::to_string(r);
    procs += (n ? ";" : "") + list;
  }
  auto node_map = regex(PMIx_generate_regex, hosts, "node map");
  if (!node_map) return node_map.error();
  auto proc_map = regex(PMIx_generate_ppn, procs, "process map");
  if (!proc_map) return proc_map.error();

  const std::vector<int> none;
  const auto& mine =
      layout.this_node < 0 ? none : node_ranks[static_cast<size_t>(layout.this_node)];
  std::string peers;
  for (int r : mine) peers += (peers.empty() ? "" : ",") + std::to_string(r);

  InfoList job;
  job.add(PMIX_NODE_MAP, node_map->c_str(), PMIX_REGEX);
  job.add(PMIX_PROC_MAP, proc_map->c_str(), PMIX_REGEX);
  job.add_u32(PMIX_UNIV_SIZE, world);
  job.add_u32(PMIX_JOB_SIZE, world);
  job.add_u32(PMIX_MAX_PROCS, world);
  job.add_text(PMIX_JOBID, layout.jobid);
  if (!layout.tmpdir.empty()) {
    job.add_text(PMIX_TMPDIR, layout.tmpdir);
    job.add_text(PMIX_NSDIR, layout.tmpdir);
  }
  job.add_u32(PMIX_APPNUM, 0);
  if (!layout.parent_nspace.empty()) {  // PMIx_Spawn's children
    pmix_proc_t parent;
    PMIX_LOAD_PROCID(&parent, layout.parent_nspace.c_str(),
                     static_cast<pmix_rank_t>(layout.parent_rank));
    job.add(PMIX_PARENT_ID, &parent, PMIX_PROC);
    bool spawned = true;
    job.add(PMIX_SPAWNED, &spawned, PMIX_BOOL);
  }
  job.add_u32(PMIX_NUM_NODES, static_cast<uint32_t>(nnodes));
  if (!mine.empty()) {  // else a namespace of no rank here (a spawned one, pmix_child_namespace)
    job.add_u32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(mine.size()));
    job.add_u32(PMIX_NODE_SIZE, static_cast<uint32_t>(mine.size()));
    job.add_text(PMIX_LOCAL_PEERS, peers);
    pmix_rank_t leader = static_cast<pmix_rank_t>(mine.front());
    job.add(PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
  }

  // Per app (MPMD): its number, size and lowest rank, as PRRTE registers them.
  std::vector<uint32_t> app_size, app_leader;
  for (uint32_t r = 0; r < world; ++r) {
    auto app = static_cast<size_t>(layout.appnums.empty() ? 0 : layout.appnums[r]);
    if (app >= app_size.size()) {
      if (app != app_size.size()) return make_error("PMIx job layout: apps out of order");
      app_size.push_back(0);
      app_leader.push_back(r);
    }
    ++app_size[app];
  }
  for (size_t app = 0; app < app_size.size(); ++app) {
    InfoList info;
    info.add_u32(PMIX_APPNUM, static_cast<uint32_t>(app));
    info.add_u32(PMIX_APP_SIZE, app_size[app]);
    pmix_rank_t leader = app_leader[app];
    info.add(PMIX_APPLDR, &leader, PMIX_PROC_RANK);
    pmix_data_array_t data;
    if (auto built = info.convert(&data); !built) return built.error();
    job.add(PMIX_APP_INFO_ARRAY, &data, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_DESTRUCT(&data);
  }

  for (uint32_t r = 0; r < world; ++r) {
    InfoList proc;
    pmix_rank_t rank = r;
    proc.add(PMIX_RANK, &rank, PMIX_PROC_RANK);
    proc.add_u32(PMIX_APPNUM,
                 layout.appnums.empty() ? 0 : static_cast<uint32_t>(layout.appnums[r]));
    proc.add_u16(PMIX_LOCAL_RANK, local_rank[r]);
    proc.add_u16(PMIX_NODE_RANK, local_rank[r]);
    proc.add_u32(PMIX_NODEID, static_cast<uint32_t>(layout.rank_nodes[r]));
    proc.add_text(PMIX_HOSTNAME, layout.nodes[static_cast<size_t>(layout.rank_nodes[r])]);
    pmix_data_array_t data;
    if (auto built = proc.convert(&data); !built) return built.error();
    job.add(PMIX_PROC_DATA, &data, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_DESTRUCT(&data);
  }
  JobInfo out;
  if (auto built = job.convert(out.array()); !built) return built.error();
  return out;
}

}  // namespace lattice::pmix
