// The info array PMIx_server_register_nspace takes, built from a JobLayout: job-level sizes and
// ids, the node and proc maps (libpmix's own regex encodings), and per-rank data with the
// local and node ranks Open MPI's MPI_Init insists on (docs/pmi-wire.md §7). Private to pmix/.
#pragma once

#include <pmix_common.h>

#include <vector>

#include "base/result.hpp"
#include "pmix/server.hpp"

namespace lattice::pmix {

// Owns a pmix_info_t array (libpmix reads it until register_nspace answers).
class JobInfo {
 public:
  JobInfo() { PMIX_DATA_ARRAY_CONSTRUCT(&array_, 0, PMIX_INFO); }
  ~JobInfo() { PMIX_DATA_ARRAY_DESTRUCT(&array_); }
  JobInfo(JobInfo&& other) noexcept : array_(other.array_) {
    PMIX_DATA_ARRAY_CONSTRUCT(&other.array_, 0, PMIX_INFO);
  }
  JobInfo(const JobInfo&) = delete;
  JobInfo& operator=(const JobInfo&) = delete;
  JobInfo& operator=(JobInfo&&) = delete;

  pmix_info_t* info() { return static_cast<pmix_info_t*>(array_.array); }
  size_t size() const { return array_.size; }
  pmix_data_array_t* array() { return &array_; }

 private:
  pmix_data_array_t array_;
};

// Checks the layout (ranks on known nodes, this node among them) and builds the array.
Result<JobInfo> job_info(const JobLayout& layout);

// The ranks on layout.this_node, ascending.
std::vector<int> local_ranks(const JobLayout& layout);

}  // namespace lattice::pmix
