// Host lists as Slurm writes them ("n[1-256]", "gpu[001-064],login1"): a launch names its nodes
// in a few bytes however many there are, when their names are numbered (they usually are).
// compress() keeps the order: only neighbours with one prefix, numbered up by one, share a
// range, so HostList::parse(compress(names)).names() == names for every list of names without
// '[', ']' or ','.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice {

// nullopt when a name is empty or holds '[', ']' or ',' (the list is then sent as it is).
std::optional<std::string> compress_hostlist(const std::vector<std::string>& names);

// A host list kept as its ranges: named by index and searched by name without expanding it. A
// launch tells every agent all M nodes and each needs a few (its tree neighbours, whoever
// messages it), so expanding them made every agent's share of a launch grow with M.
class HostList {
 public:
  // Comma-separated items, each a name or PREFIX[RANGES]SUFFIX with RANGES comma-separated
  // numbers or LOW-HIGH ranges (a LOW written with leading zeros pads every number to its
  // width). Hostile input is bounded: an Error beyond `max_names` names or on any malformed item.
  static Result<HostList> parse(std::string_view list, size_t max_names);
  // The names as they are (any bytes; nothing is parsed).
  static HostList of(const std::vector<std::string>& names);

  size_t size() const { return size_; }
  std::string name(size_t index) const;  // index < size()
  std::vector<std::string> names() const;
  // fn(index, name) for every name in order; `name` lives until fn returns.
  template <class Fn>
  void for_each(Fn fn) const {
    std::string name;
    for (const auto& r : ranges_)
      for (size_t i = r.first; i < r.first + count(r); ++i) {
        name.clear();
        append_name(r, i, name);
        fn(i, std::string_view(name));
      }
  }
  // The names joined by `separator`, built in one string.
  std::string joined(char separator) const;
  // Index of the first name equal to `name`: a walk over the ranges, not the names.
  std::optional<size_t> find(std::string_view name) const;
  // A name listed twice, if any. Decided from the ranges when every name ends in its number
  // (what compress() writes, and Slurm's usual lists); otherwise by hashing the names.
  std::optional<std::string> duplicate() const;
  size_t ranges() const { return ranges_.size(); }

 private:
  // Names first .. first + (high - low): prefix, number (padded to width), suffix; or, not
  // numbered, the prefix alone. Prefixes and suffixes are offsets into text_.
  struct Range {
    size_t prefix_at = 0, prefix_size = 0, suffix_at = 0, suffix_size = 0;
    bool numbered = false;
    uint64_t low = 0, high = 0;
    size_t width = 0;
    size_t first = 0;
  };
  std::string_view prefix(const Range& r) const {
    return {text_.data() + r.prefix_at, r.prefix_size};
  }
  std::string_view suffix(const Range& r) const {
    return {text_.data() + r.suffix_at, r.suffix_size};
  }
  static size_t count(const Range& r) { return r.numbered ? r.high - r.low + 1 : 1; }
  void append_name(const Range& r, size_t index, std::string& out) const;
  const Range& range_of(size_t index) const;
  std::optional<std::string> duplicate_by_hash() const;

  std::string text_;
  std::vector<Range> ranges_;
  size_t size_ = 0;
};

}  // namespace lattice
