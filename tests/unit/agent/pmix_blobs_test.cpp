#include "agent/pmix_blobs.hpp"

#include <doctest/doctest.h>

using namespace lattice;
using namespace lattice::agent;

namespace {
std::vector<KvView> views(const pmi::KvList& list) {
  std::vector<KvView> out;
  for (const auto& [k, v] : list) out.emplace_back(k, v);
  return out;
}
}  // namespace

TEST_CASE("PMIx blobs travel as they are, binary included") {
  PmixBlobs blobs(2);
  std::string blob("\x00\x01\xff\x7f", 4);
  CHECK(blobs.contribution(blob) == pmi::KvList{{"pmix.2", blob}});
  PmixBlobs other(1);
  auto merged = other.contribution("from n1");
  merged.emplace_back("pmix.2", blob);
  merged.emplace_back("pmix.0", "from n0");
  auto data = other.fence_data(views(merged));
  REQUIRE(data);
  CHECK(*data == blob + "from n0");  // n1's own is not handed back to its libpmix
}

TEST_CASE("PMIx blobs: what the other nodes hold already is not carried again") {
  PmixBlobs blobs(0);
  CHECK(blobs.contribution("").empty());  // a fence without data
  CHECK(blobs.contribution("a").size() == 1);
  CHECK(blobs.contribution("a").empty());  // the same again: they hold it
  CHECK(blobs.contribution("").empty());
  CHECK(blobs.contribution("a").empty());  // still the last carried
  CHECK(blobs.contribution("ab").size() == 1);
  CHECK(blobs.contribution("a").size() == 1);  // different from the last carried
  blobs.served_outside_fence();                // direct modex may have handed out newer data
  CHECK(blobs.contribution("a").size() == 1);
}

TEST_CASE("PMIx blobs: a merged entry under no node's key is an error") {
  PmixBlobs blobs(0);
  for (const char* key : {"pmix.", "pmix.x", "pmix.1x", "pmix.-1", "other", "pmi"}) {
    pmi::KvList merged{{key, "v"}};
    auto data = blobs.fence_data(views(merged));
    REQUIRE(!data);
    CHECK(data.error().message ==
          std::string("a PMIx fence entry under '") + key + "', which is no node's");
  }
  CHECK(blobs.fence_data({})->empty());
}
