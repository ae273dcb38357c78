// Splits a rank's output stream into whole lines, keeping a partial line across reads so a line
// split across two reads still reaches the launcher as one (docs/pmi-wire.md T5). A line longer
// than kMaxLineBytes is passed on in pieces so one endless line cannot grow without bound.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lattice::proc {

// Longer than any sane log line; bounds what one rank's unterminated output can hold.
inline constexpr size_t kMaxLineBytes = 64 * 1024;

class LineBuffer {
 public:
  // Whole lines (each with its '\n'); a line longer than kMaxLineBytes comes out in pieces of
  // exactly kMaxLineBytes (the last piece, with the '\n', may be shorter).
  std::vector<std::string> feed(std::string_view bytes);
  // The unterminated rest, at EOF.
  std::optional<std::string> flush();

 private:
  std::string partial_;
};

}  // namespace lattice::proc
