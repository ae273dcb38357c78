// Secrets from the pooled arenas and from sodium_malloc: zeroed when handed out, never shared
// between two live secrets, wiped before a slot is reused.
#include "secure/secret.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "secure/secret_pool.hpp"

using lattice::secure::Secret;
namespace detail = lattice::secure::detail;

namespace {
bool all_zero(const Secret& s) {
  return std::all_of(s.data(), s.data() + s.size(), [](uint8_t b) { return b == 0; });
}
}  // namespace

TEST_CASE("many small secrets at once (more than one arena holds) never overlap") {
  std::vector<Secret> secrets;
  for (int i = 0; i < 200; ++i) {
    secrets.emplace_back(32);
    CHECK(all_zero(secrets.back()));
    std::fill(secrets.back().data(), secrets.back().data() + 32, static_cast<uint8_t>(i));
  }
  std::set<const uint8_t*> starts;
  for (int i = 0; i < 200; ++i) {
    starts.insert(secrets[static_cast<size_t>(i)].data());
    CHECK(secrets[static_cast<size_t>(i)].data()[31] == static_cast<uint8_t>(i));
  }
  CHECK(starts.size() == 200);
}

TEST_CASE("a released slot comes back wiped") {
  const uint8_t* first;
  {
    Secret s(detail::kSlotBytes);
    std::fill(s.data(), s.data() + s.size(), 0xAB);
    first = s.data();
  }
  Secret again(detail::kSlotBytes);
  CHECK(again.data() == first);  // the pool hands back the slot it just got
  CHECK(all_zero(again));
}

TEST_CASE("large secrets, moves and wipe") {
  Secret big(4096);
  CHECK(all_zero(big));
  big.data()[4095] = 7;
  Secret moved(std::move(big));
  CHECK(moved.size() == 4096);
  CHECK(moved.data()[4095] == 7);
  CHECK(big.data() == nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is API
  moved.wipe();
  CHECK(all_zero(moved));
}
