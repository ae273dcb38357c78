// Quoting and PMI-1 token helpers (see text.hpp).
#include "pmi/text.hpp"

namespace lattice::pmi {

namespace {

bool plain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '\\'; }

}  // namespace

std::string printable(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size());
  for (char ch : bytes) {
    auto c = static_cast<unsigned char>(ch);
    if (plain(c)) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

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
