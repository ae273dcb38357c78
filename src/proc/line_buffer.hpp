// Splits a rank's output stream into whole lines, keeping a partial line across reads so a line
// split across two reads still reaches the launcher as one (pmi-wire.md T5). A line longer than
// kMaxLineBytes is passed on in pieces so one endless line cannot grow without bound.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lattice::proc {

inline constexpr size_t kMaxLineBytes = 64 * 1024;

class LineBuffer {
 public:
  // Whole lines (each with its '\n'), and over-long partial lines cut at kMaxLineBytes.
  std::vector<std::string> feed(std::string_view bytes);
  // The unterminated rest, at EOF.
  std::optional<std::string> flush();

 private:
  std::string partial_;
};

}  // namespace lattice::proc
