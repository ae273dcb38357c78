// Quoting and PMI-1 token helpers (see text.hpp).
#include "pmi/text.hpp"

namespace lattice::pmi {

std::string quoted(std::string_view bytes) {
  bool cut = bytes.size() > kQuoteMaxBytes;
  std::string out = "\"" + printable(bytes.substr(0, kQuoteMaxBytes));
  if (cut) out += "...";
  return out + "\"";
}

bool is_pmi1_token(std::string_view value) {
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f) return false;
  }
  return true;
}

std::string pmi1_token(std::string_view text) {
  std::string out(text);
  for (char& ch : out) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f) ch = '_';
  }
  return out;
}

}  // namespace lattice::pmi
