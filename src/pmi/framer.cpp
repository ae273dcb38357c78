// Message boundaries of the PMI byte stream (see framer.hpp). Partial input is kept across
// feed() calls; searches resume where they stopped so byte-at-a-time input stays linear.
#include "pmi/framer.hpp"

#include "base/strings.hpp"
#include "pmi/text.hpp"

namespace lattice::pmi {

namespace {

constexpr std::string_view kPmi1Start = "cmd=";
constexpr std::string_view kPmi1MultiStart = "mcmd=";
constexpr std::string_view kLineEnd = "\n";
// An `mcmd=` request (MPICH PMI-1 spawn) ends with a line holding only "endcmd".
constexpr std::string_view kMultiEnd = "\nendcmd\n";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<size_t> parse_frame_length(std::string_view field, size_t max) {
  size_t i = 0;
  while (i < field.size() && field[i] == ' ') ++i;
  size_t digits_begin = i;
  size_t value = 0;
  bool overflow = false;
  while (i < field.size() && is_digit(field[i])) {
    value = value * 10 + static_cast<size_t>(field[i] - '0');
    if (value > max) overflow = true;  // keep scanning: a malformed field is reported as such
    ++i;
  }
  size_t digits_end = i;
  while (i < field.size() && field[i] == ' ') ++i;
  if (digits_begin == digits_end || i != field.size())
    return make_error(cat("malformed PMI-2 frame length ", quoted(field)));
  if (value == 0) return make_error(cat("PMI-2 frame length ", quoted(field), " is zero"));
  if (overflow)
    return make_error(
        cat("PMI-2 frame length ", quoted(field), " exceeds the ", max, "-byte frame limit"));
  return value;
}

Result<std::optional<Frame>> Framer::next() {
  std::string_view pending(buf_.data() + start_, buf_.size() - start_);
  if (pending.empty()) return std::optional<Frame>();
  for (std::string_view start : {kPmi1Start, kPmi1MultiStart}) {
    // Too short to tell a PMI-1 line from a PMI-2 length field yet.
    if (pending.size() < start.size() && start.substr(0, pending.size()) == pending)
      return std::optional<Frame>();
  }
  if (starts_with(pending, kPmi1Start)) return next_line(kLineEnd);
  if (starts_with(pending, kPmi1MultiStart)) return next_line(kMultiEnd);
  return next_pmi2();
}

Result<std::optional<Frame>> Framer::next_line(std::string_view terminator) {
  std::string_view pending(buf_.data() + start_, buf_.size() - start_);
  // Resume the search just before the bytes not searched yet, so a terminator split across
  // reads is still found.
  size_t from = scanned_ >= terminator.size() ? scanned_ - (terminator.size() - 1) : 0;
  size_t pos = pending.find(terminator, from);
  if (pos == std::string_view::npos) {
    scanned_ = pending.size();
    if (pending.size() > max_frame_)
      return make_error(cat("PMI-1 request longer than the ", max_frame_,
                            "-byte frame limit without a line end: starts ", quoted(pending)));
    return std::optional<Frame>();
  }
  size_t size = pos + terminator.size();
  if (size > max_frame_)
    return make_error(cat("PMI-1 request of ", size, " bytes exceeds the ", max_frame_,
                          "-byte frame limit: starts ", quoted(pending)));
  Frame frame;
  frame.wire = Wire::pmi1;
  frame.body.assign(pending.substr(0, size));
  consume(size);
  return std::optional<Frame>(std::move(frame));
}

Result<std::optional<Frame>> Framer::next_pmi2() {
  std::string_view pending(buf_.data() + start_, buf_.size() - start_);
  if (pending.size() < kPmi2HeaderBytes) return std::optional<Frame>();
  std::string_view header = pending.substr(0, kPmi2HeaderBytes);
  auto length = parse_frame_length(header, max_frame_);
  if (!length) return length.error();
  if (pending.size() < kPmi2HeaderBytes + *length) return std::optional<Frame>();
  Frame frame;
  frame.wire = Wire::pmi2;
  frame.header.assign(header);
  frame.body.assign(pending.substr(kPmi2HeaderBytes, *length));
  consume(kPmi2HeaderBytes + *length);
  return std::optional<Frame>(std::move(frame));
}

void Framer::consume(size_t n) {
  start_ += n;
  scanned_ = 0;
  // Drop consumed bytes once they are at least half the buffer: amortised linear copying.
  if (start_ == buf_.size()) {
    buf_.clear();
    start_ = 0;
  } else if (start_ * 2 >= buf_.size()) {
    buf_.erase(0, start_);
    start_ = 0;
  }
}

}  // namespace lattice::pmi
