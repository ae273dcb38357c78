// libFuzzer target: RFC0029's setup data as an agent takes it from a launch request's
// AppSetup.vendor (pmix/app_setup_codec.hpp). Any bytes are decoded or refused, never crash,
// read past their end or keep more than the bounds allow; what is accepted encodes to exactly
// the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "pmix/app_setup_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lattice::pmix;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto entries = decode_app_setup(bytes);
  if (!entries) return 0;
  if (size > kMaxAppSetupBytes || entries->size() > kMaxAppSetupEntries) std::abort();
  size_t envars = 0;
  for (const auto& entry : *entries) envars += entry.envars.size();
  if (envars > kMaxAppSetupEnvars) std::abort();
  if (encode_app_setup(*entries) != bytes) std::abort();
  return 0;
}
