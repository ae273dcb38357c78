// LineBuffer: at most kMaxLineBytes are ever held, whatever the input looks like.
#include "proc/line_buffer.hpp"

namespace lattice::proc {

std::vector<std::string> LineBuffer::feed(std::string_view bytes) {
  std::vector<std::string> lines;
  while (!bytes.empty()) {
    // Look for the end of the line only within what still fits in one piece.
    size_t room = kMaxLineBytes - partial_.size();
    size_t eol = bytes.substr(0, room).find('\n');
    size_t take = eol == std::string_view::npos ? std::min(room, bytes.size()) : eol + 1;
    partial_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (eol != std::string_view::npos || partial_.size() == kMaxLineBytes) {
      lines.push_back(std::move(partial_));
      partial_.clear();
    }
  }
  return lines;
}

std::optional<std::string> LineBuffer::flush() {
  if (partial_.empty()) return std::nullopt;
  std::string rest = std::move(partial_);
  partial_.clear();
  return rest;
}

}  // namespace lattice::proc
