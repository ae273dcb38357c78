// The info array an agent hands PMIx_server_setup_local_support, loaded from the variables the
// agent checked (app_setup.hpp). Private to pmix/.
#pragma once

#include <pmix_common.h>

#include <memory>
#include <vector>

#include "base/result.hpp"
#include "pmix/app_setup_codec.hpp"

namespace lattice::pmix {

// Owns a pmix_info_t array (libpmix reads it until setup_local_support answers).
class SetupInfo {
 public:
  explicit SetupInfo(size_t n) { PMIX_DATA_ARRAY_CONSTRUCT(&array_, n, PMIX_INFO); }
  ~SetupInfo() { PMIX_DATA_ARRAY_DESTRUCT(&array_); }
  SetupInfo(const SetupInfo&) = delete;
  SetupInfo& operator=(const SetupInfo&) = delete;
  pmix_info_t* info() { return static_cast<pmix_info_t*>(array_.array); }
  size_t size() const { return array_.size; }

 private:
  pmix_data_array_t array_;
};

// An error for an entry of a key this agent does not carry.
Result<std::shared_ptr<SetupInfo>> local_support_info(const std::vector<SetupEntry>& entries);

}  // namespace lattice::pmix
