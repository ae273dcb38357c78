#include "admin/protocol.hpp"

#include <algorithm>

#include "base/strings.hpp"

namespace lattice::admin {

std::optional<std::string> RequestBuffer::add(std::string_view bytes) {
  if (given_) return std::nullopt;
  size_t eol = bytes.find('\n');
  line_.append(bytes.substr(0, std::min(eol, kMaxRequestBytes - line_.size())));
  if (eol == std::string_view::npos && line_.size() < kMaxRequestBytes) return std::nullopt;
  given_ = true;
  return std::move(line_);
}

bool AnswerBuffer::add(std::string_view bytes) {
  bytes_.append(bytes.substr(0, kMaxAnswerBytes - bytes_.size()));
  cut_ = bytes_.size() == kMaxAnswerBytes;  // what follows is not read
  return !cut_;
}

Answer AnswerBuffer::take() const {
  Answer answer;
  answer.error = starts_with(bytes_, "error:");
  answer.cut = cut_;
  answer.text.reserve(bytes_.size());
  std::string_view rest = bytes_;
  while (!rest.empty()) {
    size_t eol = std::min(rest.find('\n'), rest.size());
    answer.text += printable(rest.substr(0, eol));
    if (eol < rest.size()) answer.text += '\n';
    rest.remove_prefix(std::min(eol + 1, rest.size()));
  }
  return answer;
}

}  // namespace lattice::admin
