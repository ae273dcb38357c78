// The per-launch store with its limits and per-rank accounting (see kvs.hpp).
#include "pmi/kvs.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/strings.hpp"
#include "pmi/text.hpp"

namespace lattice::pmi {

Status check_key(std::string_view key, const Limits& limits) {
  if (key.empty()) return make_error("empty key");
  if (key.size() > limits.max_key)
    return make_error(cat("key ", quoted(key), " is ", key.size(), " bytes, over the ",
                          limits.max_key, "-byte key limit"));
  for (char ch : key) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f || c == '=' || c == ';')
      return make_error(cat("key ", quoted(key), " holds a byte not allowed in keys"));
  }
  return {};
}

Status check_value(std::string_view key, std::string_view value, const Limits& limits) {
  if (value.size() > limits.max_value)
    return make_error(cat("value of key ", quoted(key), " is ", value.size(), " bytes, over the ",
                          limits.max_value, "-byte value limit"));
  if (value.find('\0') != std::string_view::npos)
    return make_error(cat("value of key ", quoted(key), " holds a NUL byte"));
  return {};
}

Status Kvs::check_put(int rank, Space space, std::string_view key, std::string_view value) {
  if (auto st = check_key(key, limits_); !st) return st;
  if (auto st = check_value(key, value, limits_); !st) return st;
  return charge(rank, space, key, key.size() + value.size());
}

Status Kvs::charge(int rank, Space space, std::string_view key, size_t bytes) {
  // One hashed slot per (rank, space, key): short keys stay within the string's own buffer, so
  // a put allocates nothing here unless its key is new.
  std::string slot(sizeof rank + 1 + key.size(), '\0');
  std::memcpy(slot.data(), &rank, sizeof rank);
  slot[sizeof rank] = static_cast<char>(space);
  std::memcpy(slot.data() + sizeof rank + 1, key.data(), key.size());
  Usage& usage = usage_[rank];
  auto it = charged_.find(slot);
  size_t old_bytes = it == charged_.end() ? 0 : it->second;
  if (it == charged_.end() && usage.keys + 1 > limits_.max_keys_per_rank)
    return make_error(
        cat("rank ", rank, " already stores ", usage.keys, " keys, the per-rank key limit"));
  size_t new_total = usage.bytes - old_bytes + bytes;
  if (new_total > limits_.max_bytes_per_rank)
    return make_error(cat("rank ", rank, " would store ", new_total, " bytes, over the ",
                          limits_.max_bytes_per_rank, "-byte per-rank limit"));
  if (it == charged_.end()) {
    charged_.emplace(std::move(slot), bytes);
    ++usage.keys;
  } else {
    it->second = bytes;
  }
  usage.bytes = new_total;
  return {};
}

Status Kvs::put(int rank, std::string_view key, std::string_view value) {
  if (auto st = check_put(rank, Space::kvs, key, value); !st) return st;
  queue(std::string(key), std::string(value));
  return {};
}

void Kvs::put_reserved(std::string key, std::string value) {
  queue(std::move(key), std::move(value));
}

void Kvs::queue(std::string key, std::string value) {
  auto it = pending_index_.find(key);
  if (it != pending_index_.end()) {
    pending_[it->second].second = std::move(value);
    return;
  }
  pending_index_.emplace(key, pending_.size());
  pending_.emplace_back(std::move(key), std::move(value));
}

KvList Kvs::take_pending() {
  KvList out;
  out.swap(pending_);
  pending_index_.clear();
  return out;
}

namespace {

// Strictly sorted client keys: already a run. The tree's merged stores are, so one pass over
// them is all publish costs before the merge.
bool is_run(const std::vector<KvView>& entries) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (is_reserved_key(entries[i].first)) return false;
    if (i > 0 && !(entries[i - 1].first < entries[i].first)) return false;
  }
  return true;
}

// One run, sorted, each key once (the last entry of a key wins, as in the store it came from).
KvStore as_run(KvStore store) {
  auto& entries = store.entries;
  if (is_run(entries)) return store;
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const KvView& kv) { return is_reserved_key(kv.first); }),
                entries.end());
  keep_last_by_key(entries);
  return store;
}

size_t viewed_bytes(const std::vector<KvView>& entries) {
  size_t bytes = 0;
  for (const auto& [key, value] : entries) bytes += key.size() + value.size();
  return bytes;
}

// A finished merge as a run: its entries view the sources' bytes, so it takes their owners;
// unless most of the bytes kept alive are no longer viewed (values replaced fence after fence),
// when its entries move into bytes of its own, so a launch's memory stays within about twice
// what its store holds.
KvStore finish_merge(KvStore out, KvStore older, KvStore newer) {
  const size_t live = viewed_bytes(out.entries) + 8 * out.entries.size();  // with framing
  const size_t owned = older.owned_bytes + newer.owned_bytes;
  if (owned > 2 * live + 4096) {
    std::vector<std::pair<std::string, std::string>> copy;
    copy.reserve(out.entries.size());
    for (const auto& [key, value] : out.entries) copy.emplace_back(key, value);
    return owning_store(std::move(copy));
  }
  older.entries = std::move(out.entries);
  newer.entries.clear();
  append(older, std::move(newer));  // the owners of both, and what they hold
  return older;
}

// A merge takes at least this many entries per publish, and at least an eighth of its size:
// it ends within eight publishes, so only a few more runs than O(log keys) are ever searched.
constexpr size_t kMinMergeStep = 1024;
constexpr size_t kMergeSlices = 8;
// Runs left unmerged: a get searches each (a binary search), a merge moves every entry of two.
constexpr size_t kUnmergedRuns = 8;

}  // namespace

// Like a binary counter, a run at most twice the size of the one after it is merged with it, so
// each key is moved O(log keys) times over the launch, never hashed. Done at once, a carry
// merges the whole store, on every node at the same fence (a launch's nodes all publish the
// same stores): 53k entries at the 13th fence of 4,096 keys, 0.8 s of stall on 256 agents
// sharing two cores (issue 11). So each publish owes the merges a bounded step instead: what a
// counter merges per publish on average, or the merge's own slice, whichever is more. And the
// first few runs are not merged at all: most launches fence a few times, and a get searching a
// few runs costs less than moving every entry. The step is taken by compact(), after the
// fence's ranks have their answers, so a node with cores of its own releases its ranks before
// it merges (at 4,096 keys a fence and 4 levels, some 16k entries moved). On 256 agents sharing
// two cores it changes nothing: the merges still share the cores with the fence's tail there.
void Kvs::publish(KvStore merged) {
  KvStore run = as_run(std::move(merged));
  if (run.entries.empty()) return;
  // What a binary counter merges per publish on average: the run's size once per level.
  size_t stored = 0;
  for (const KvStore& r : runs_) stored += r.entries.size();
  size_t levels = 2;
  for (size_t n = stored / run.entries.size(); n > 1; n /= 2) ++levels;
  owed_ += levels * run.entries.size();
  runs_.push_back(std::move(run));
}

size_t Kvs::compact() {
  size_t budget = std::exchange(owed_, 0), merged = 0;
  if (budget == 0) return 0;
  while (merge_ || start_merge()) {
    const size_t done = merge_step(std::max(budget, merge_->step));
    merged += done;
    if (merge_ || done >= budget) break;  // the step ran out, or ended a merge that used it up
    budget -= done;
  }
  return merged;
}

bool Kvs::start_merge() {
  if (runs_.size() <= kUnmergedRuns) return false;
  for (size_t i = runs_.size(); i-- > 1;) {  // the newest pair first, as a counter carries
    if (runs_[i - 1].entries.size() > 2 * runs_[i].entries.size()) continue;
    Merge m;
    m.at = i - 1;
    const size_t total = runs_[i - 1].entries.size() + runs_[i].entries.size();
    m.step = std::max(kMinMergeStep, total / kMergeSlices + 1);
    m.out.entries.reserve(total);
    merge_ = std::move(m);
    return true;
  }
  return false;
}

// Up to `budget` entries of the merge in progress; when it is complete, the merged run replaces
// its two sources. On a clash the newer run's value wins.
size_t Kvs::merge_step(size_t budget) {
  Merge& m = *merge_;
  const auto& older = runs_[m.at].entries;
  const auto& newer = runs_[m.at + 1].entries;
  size_t done = 0;
  while (done < budget && (m.older < older.size() || m.newer < newer.size())) {
    // One three-way comparison per entry: the merge's cost is mostly comparing keys.
    const int order = m.newer == newer.size() ? -1
                      : m.older == older.size()
                          ? 1
                          : older[m.older].first.compare(newer[m.newer].first);
    if (order < 0) {
      m.out.entries.push_back(older[m.older++]);
    } else {
      if (order == 0) ++m.older;
      m.out.entries.push_back(newer[m.newer++]);
    }
    ++done;
  }
  if (m.older < older.size() || m.newer < newer.size()) return done;
  KvStore newer_run = std::move(runs_[m.at + 1]);
  runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(m.at) + 1);
  runs_[m.at] = finish_merge(std::move(m.out), std::move(runs_[m.at]), std::move(newer_run));
  merge_.reset();
  return done;
}

size_t Kvs::bytes_held() const {
  size_t bytes = 0;
  for (const KvStore& run : runs_) bytes += run.owned_bytes;
  return bytes;
}

std::optional<std::string_view> Kvs::get(std::string_view key) const {
  for (auto run = runs_.rbegin(); run != runs_.rend(); ++run) {  // newest first
    auto it = std::lower_bound(run->entries.begin(), run->entries.end(), key,
                               [](const KvView& kv, std::string_view k) { return kv.first < k; });
    if (it != run->entries.end() && it->first == key) return it->second;
  }
  return std::nullopt;
}

Status Kvs::put_node_attr(int rank, std::string_view key, std::string_view value) {
  if (auto st = check_put(rank, Space::node, key, value); !st) return st;
  node_attrs_[std::string(key)] = std::string(value);
  return {};
}

const std::string* Kvs::node_attr(std::string_view key) const {
  auto it = node_attrs_.find(std::string(key));
  return it == node_attrs_.end() ? nullptr : &it->second;
}

}  // namespace lattice::pmi
