#include "base/hostlist.hpp"

#include <cstdint>

#include "base/strings.hpp"

namespace lattice {
namespace {

constexpr size_t kMaxDigits = 18;  // numbers fit in uint64_t with room to add one

bool is_digit(char c) { return c >= '0' && c <= '9'; }

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
  if (digits == 0 || digits > kMaxDigits) return std::nullopt;
  Numbered n;
  n.prefix = name.substr(0, name.size() - digits);
  n.width = digits;
  n.padded = digits > 1 && name[name.size() - digits] == '0';
  for (char c : name.substr(name.size() - digits)) n.number = n.number * 10 + uint64_t(c - '0');
  return n;
}

// `next` continues the run that `last` ends: same prefix, one more, written the same way.
bool continues(const Numbered& last, const Numbered& next) {
  if (next.prefix != last.prefix || next.number != last.number + 1) return false;
  if (last.padded || next.padded) return next.width == last.width;
  return true;  // unpadded numbers may grow a digit (9 -> 10)
}

std::string number_text(uint64_t n, size_t width) {
  std::string digits = std::to_string(n);
  return digits.size() < width ? std::string(width - digits.size(), '0') + digits : digits;
}

Result<uint64_t> parse_number(std::string_view s, std::string_view list) {
  if (s.empty() || s.size() > kMaxDigits)
    return make_error(cat("host list '", list, "': '", s, "' is not a number"));
  uint64_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return make_error(cat("host list '", list, "': '", s, "' is not a number"));
    v = v * 10 + uint64_t(c - '0');
  }
  return v;
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
      out += cat(first->prefix, '[', number_text(first->number, width), '-',
                 number_text(first->number + (j - i - 1), width), ']');
    }
    i = j;
  }
  return out;
}

Result<std::vector<std::string>> expand_hostlist(std::string_view list, size_t max_names) {
  std::vector<std::string> names;
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
    std::string_view item = list.substr(pos, end - pos);
    if (item.empty()) return make_error(cat("host list '", list, "': an empty name"));
    if (open == std::string_view::npos) {
      if (names.size() >= max_names) return too_many();
      names.emplace_back(item);
    } else {
      if (close == std::string_view::npos)
        return make_error(cat("host list '", list, "': '[' without ']'"));
      std::string_view prefix = list.substr(pos, open - pos);
      std::string_view suffix = list.substr(close + 1, end - close - 1);
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
        size_t width = low_text.size() > 1 && low_text[0] == '0' ? low_text.size() : 0;
        if (high - *low >= max_names - std::min(max_names, names.size())) return too_many();
        for (uint64_t n = *low; n <= high; ++n)
          names.push_back(cat(prefix, number_text(n, width), suffix));
        rpos = comma + 1;
      }
    }
    pos = end + 1;
  }
  return names;
}

}  // namespace lattice
