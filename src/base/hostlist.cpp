#include "base/hostlist.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <tuple>
#include <unordered_set>

#include "base/strings.hpp"

namespace lattice {
namespace {

constexpr size_t kMaxDigits = 18;  // numbers fit in uint64_t with room to add one

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The value of 1 to kMaxDigits decimal digits; nullopt for anything else.
std::optional<uint64_t> digits_value(std::string_view s) {
  if (s.empty() || s.size() > kMaxDigits) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return std::nullopt;
    v = v * 10 + uint64_t(c - '0');
  }
  return v;
}

// A name split at its trailing number: "n007" -> {"n", 7, width 3, padded}.
struct Numbered {
  std::string_view prefix;
  uint64_t number = 0;
  size_t width = 0;     // digits written
  bool padded = false;  // written with leading zeros: the width is part of the name
};

std::optional<Numbered> split_number(std::string_view name) {
  size_t digits = 0;
  while (digits < name.size() && is_digit(name[name.size() - 1 - digits])) ++digits;
  auto number = digits_value(name.substr(name.size() - digits));
  if (!number) return std::nullopt;
  Numbered n;
  n.prefix = name.substr(0, name.size() - digits);
  n.number = *number;
  n.width = digits;
  n.padded = digits > 1 && name[name.size() - digits] == '0';
  return n;
}

// `next` continues the run that `last` ends: same prefix, one more, written the same way.
bool continues(const Numbered& last, const Numbered& next) {
  if (next.prefix != last.prefix || next.number != last.number + 1) return false;
  if (last.padded || next.padded) return next.width == last.width;
  return true;  // unpadded numbers may grow a digit (9 -> 10)
}

// n in decimal, padded with zeros to `width`, appended in place (names are built by the
// thousand on every agent of a launch: no temporary strings).
void append_number(std::string& out, uint64_t n, size_t width) {
  char digits[20];
  size_t size = static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, n).ptr - digits);
  if (size < width) out.append(width - size, '0');
  out.append(digits, size);
}

Result<uint64_t> parse_number(std::string_view s, std::string_view list) {
  if (auto v = digits_value(s)) return *v;
  return make_error(cat("host list '", list, "': '", s, "' is not a number"));
}

}  // namespace

std::optional<std::string> compress_hostlist(const std::vector<std::string>& names) {
  std::string out;
  size_t i = 0;
  while (i < names.size()) {
    const std::string& name = names[i];
    if (name.empty() || name.find_first_of("[],") != std::string::npos) return std::nullopt;
    auto first = split_number(name);
    size_t j = i + 1;
    if (first) {
      Numbered last = *first;
      for (; j < names.size(); ++j) {
        auto next = split_number(names[j]);
        if (!next || !continues(last, *next)) break;
        last = *next;
      }
    }
    if (!out.empty()) out += ',';
    if (j - i == 1) {
      out += name;
    } else {
      size_t width = first->padded ? first->width : 0;
      out += first->prefix;
      out += '[';
      append_number(out, first->number, width);
      out += '-';
      append_number(out, first->number + (j - i - 1), width);
      out += ']';
    }
    i = j;
  }
  return out;
}

Result<HostList> HostList::parse(std::string_view list, size_t max_names) {
  HostList out;
  out.text_ = std::string(list);
  auto too_many = [&] {
    return make_error(cat("host list '", list.substr(0, 64), list.size() > 64 ? "...'" : "'",
                          " names more than ", max_names, " hosts"));
  };
  size_t pos = 0;
  while (pos <= list.size()) {
    // One item: up to the next ',' outside brackets.
    size_t open = std::string_view::npos, close = std::string_view::npos, end = pos;
    for (; end < list.size(); ++end) {
      char c = list[end];
      if (c == '[') {
        if (open != std::string_view::npos)
          return make_error(cat("host list '", list, "': one [...] per name"));
        open = end;
      } else if (c == ']') {
        if (open == std::string_view::npos || close != std::string_view::npos)
          return make_error(cat("host list '", list, "': unbalanced ']'"));
        close = end;
      } else if (c == ',' && (open == std::string_view::npos || close != std::string_view::npos)) {
        break;
      }
    }
    if (end == pos) return make_error(cat("host list '", list, "': an empty name"));
    if (open == std::string_view::npos) {
      if (out.size_ >= max_names) return too_many();
      out.ranges_.push_back(Range{pos, end - pos, 0, 0, false, 0, 0, 0, out.size_++});
    } else {
      if (close == std::string_view::npos)
        return make_error(cat("host list '", list, "': '[' without ']'"));
      std::string_view ranges = list.substr(open + 1, close - open - 1);
      size_t rpos = 0;
      while (rpos <= ranges.size()) {
        size_t comma = ranges.find(',', rpos);
        if (comma == std::string_view::npos) comma = ranges.size();
        std::string_view range = ranges.substr(rpos, comma - rpos);
        size_t dash = range.find('-');
        std::string_view low_text = range.substr(0, dash);
        auto low = parse_number(low_text, list);
        if (!low) return low.error();
        uint64_t high = *low;
        if (dash != std::string_view::npos) {
          auto parsed = parse_number(range.substr(dash + 1), list);
          if (!parsed) return parsed.error();
          high = *parsed;
          if (high < *low)
            return make_error(cat("host list '", list, "': range ", range, " runs backwards"));
        }
        if (high - *low >= max_names - std::min(max_names, out.size_)) return too_many();
        size_t width = low_text.size() > 1 && low_text[0] == '0' ? low_text.size() : 0;
        out.ranges_.push_back(
            Range{pos, open - pos, close + 1, end - close - 1, true, *low, high, width, out.size_});
        out.size_ += static_cast<size_t>(high - *low) + 1;
        rpos = comma + 1;
      }
    }
    pos = end + 1;
  }
  return out;
}

HostList HostList::of(const std::vector<std::string>& names) {
  HostList out;
  for (const auto& name : names) {
    out.ranges_.push_back(Range{out.text_.size(), name.size(), 0, 0, false, 0, 0, 0, out.size_++});
    out.text_ += name;
  }
  return out;
}

const HostList::Range& HostList::range_of(size_t index) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), index,
                             [](size_t i, const Range& r) { return i < r.first; });
  return *(it - 1);
}

void HostList::append_name(const Range& r, size_t index, std::string& out) const {
  out += prefix(r);
  if (!r.numbered) return;
  append_number(out, r.low + (index - r.first), r.width);
  out += suffix(r);
}

std::string HostList::name(size_t index) const {
  std::string out;
  append_name(range_of(index), index, out);
  return out;
}

std::vector<std::string> HostList::names() const {
  std::vector<std::string> out;
  out.reserve(size_);
  for_each([&](size_t, std::string_view name) { out.emplace_back(name); });
  return out;
}

std::string HostList::joined(char separator) const {
  std::string out;
  for_each([&](size_t i, std::string_view name) {
    if (i > 0) out += separator;
    out += name;
  });
  return out;
}

std::optional<size_t> HostList::find(std::string_view name) const {
  for (const auto& r : ranges_) {
    std::string_view pre = prefix(r), suf = suffix(r);
    if (!r.numbered) {
      if (name == pre) return r.first;
      continue;
    }
    if (name.size() <= pre.size() + suf.size() || name.substr(0, pre.size()) != pre ||
        name.substr(name.size() - suf.size()) != suf)
      continue;
    std::string_view digits = name.substr(pre.size(), name.size() - pre.size() - suf.size());
    auto n = digits_value(digits);
    if (!n || *n < r.low || *n > r.high) continue;
    std::string written;  // n as this range writes it (short: no allocation)
    append_number(written, *n, r.width);
    if (written == digits) return r.first + static_cast<size_t>(*n - r.low);
  }
  return std::nullopt;
}

std::optional<std::string> HostList::duplicate_by_hash() const {
  std::unordered_set<std::string> seen;
  seen.reserve(size_);
  for (auto& name : names())
    if (!seen.insert(name).second) return name;
  return std::nullopt;
}

std::optional<std::string> HostList::duplicate() const {
  // A name whose number ends it splits one way only (split_number): names with different
  // prefixes differ, and so do names with one prefix and different numbers. So a list whose
  // ranges all end their names with the number (and whose other names are split the same way)
  // repeats a name only where two of one prefix overlap; anything else is hashed name by name.
  struct Span {
    std::string_view prefix;
    bool numbered;
    uint64_t low, high;
  };
  std::vector<Span> spans;
  spans.reserve(ranges_.size());
  for (const auto& r : ranges_) {
    std::string_view pre = prefix(r);
    if (r.numbered) {
      if (r.suffix_size > 0 || (!pre.empty() && is_digit(pre.back()))) return duplicate_by_hash();
      spans.push_back(Span{pre, true, r.low, r.high});
    } else if (auto split = split_number(pre)) {
      spans.push_back(Span{split->prefix, true, split->number, split->number});
    } else if (!pre.empty() && is_digit(pre.back())) {
      return duplicate_by_hash();  // more digits than a number holds
    } else {
      spans.push_back(Span{pre, false, 0, 0});
    }
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.prefix, a.numbered, a.low) < std::tie(b.prefix, b.numbered, b.low);
  });
  for (size_t i = 1; i < spans.size(); ++i) {
    const Span &a = spans[i - 1], &b = spans[i];
    if (a.prefix != b.prefix || a.numbered != b.numbered) continue;
    if (!a.numbered) return std::string(a.prefix);
    if (b.low <= a.high) return duplicate_by_hash();  // may overlap: which name, exactly
  }
  return std::nullopt;
}

}  // namespace lattice
