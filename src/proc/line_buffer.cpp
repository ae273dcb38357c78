#include "proc/line_buffer.hpp"

namespace lattice::proc {

std::vector<std::string> LineBuffer::feed(std::string_view bytes) {
  std::vector<std::string> lines;
  while (!bytes.empty()) {
    size_t eol = bytes.find('\n');
    size_t take = eol == std::string_view::npos ? bytes.size() : eol + 1;
    if (partial_.size() + take > kMaxLineBytes && eol == std::string_view::npos) {
      take = kMaxLineBytes - partial_.size();
      partial_.append(bytes.substr(0, take));
      lines.push_back(std::move(partial_));
      partial_.clear();
      bytes.remove_prefix(take);
      continue;
    }
    partial_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
    if (eol != std::string_view::npos) {
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
