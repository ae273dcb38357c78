// Decoding requests and encoding responses for both PMI wires (see codec.hpp). Pure functions
// over bytes; every quirk handled here is one a real client shows (docs/pmi-wire.md §2, §5).
#include "pmi/codec.hpp"

#include <cassert>
#include <cstdio>

#include "base/strings.hpp"
#include "pmi/text.hpp"

namespace lattice::pmi {

namespace {

constexpr std::string_view kCmdKey = "cmd";
constexpr std::string_view kMultiCmdKey = "mcmd";
constexpr std::string_view kMultiEndLine = "endcmd";
// The largest body a `%-6d` length field can announce.
constexpr size_t kPmi2MaxEncodableBody = 999999;

struct Pair {
  std::string_view key;
  std::string_view value;
};

// Splits "k=v" at its first '='; nullopt without '='.
std::optional<Pair> split_pair(std::string_view token) {
  size_t eq = token.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  return Pair{token.substr(0, eq), token.substr(eq + 1)};
}

Result<Command> decode_pmi1_multi(std::string_view text) {
  Command cmd;
  cmd.wire = Wire::pmi1;
  bool first = true;
  for (const std::string& line : split(text, '\n')) {
    if (line.empty()) continue;
    if (line == kMultiEndLine) break;
    auto pair = split_pair(line);
    if (!pair || pair->key.empty())
      return make_error(cat("malformed PMI-1 line ", quoted(line), " in an mcmd request"));
    if (first) {
      if (pair->key != kMultiCmdKey || pair->value.empty())
        return make_error(cat("malformed PMI-1 mcmd request ", quoted(text)));
      cmd.name.assign(pair->value);
      first = false;
    } else {
      cmd.fields.emplace_back(pair->key, pair->value);
    }
  }
  return cmd;
}

Result<Command> decode_pmi1(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (starts_with(text, "mcmd=")) return decode_pmi1_multi(text);
  Command cmd;
  cmd.wire = Wire::pmi1;
  bool first = true;
  for (const std::string& token : split(text, ' ')) {
    if (token.empty()) continue;  // tolerate doubled spaces
    auto pair = split_pair(token);
    if (first) {
      if (!pair || pair->key != kCmdKey || pair->value.empty())
        return make_error(cat("malformed PMI-1 line ", quoted(text)));
      cmd.name.assign(pair->value);
      first = false;
    } else if (pair && !pair->key.empty()) {
      cmd.fields.emplace_back(pair->key, pair->value);
    } else if (!pair && !cmd.fields.empty()) {
      // Free text with spaces (an abort message): the token belongs to the previous value.
      cmd.fields.back().second += ' ';
      cmd.fields.back().second += token;
    } else {
      return make_error(cat("malformed PMI-1 token ", quoted(token), " in line ", quoted(text)));
    }
  }
  if (first) return make_error(cat("malformed PMI-1 line ", quoted(text)));
  return cmd;
}

// Hot path (every kvs-get request): values are copied a run between ';'s at a time.
Result<Command> decode_pmi2(std::string_view body) {
  std::string_view text = body.substr(0, body.find('\0'));
  Command cmd;
  cmd.wire = Wire::pmi2;
  cmd.fields.reserve(4);  // a kvs-get has three
  bool first = true;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eq = text.find_first_of("=;", pos);
    if (eq == std::string_view::npos || text[eq] != '=' || eq == pos) break;  // junk: stop
    std::string key(text.substr(pos, eq - pos));
    std::string value;
    size_t i = eq + 1;
    bool closed = false;
    while (i < text.size()) {
      size_t semi = text.find(';', i);
      if (semi == std::string_view::npos) break;
      value.append(text.data() + i, semi - i);
      if (semi + 1 < text.size() && text[semi + 1] == ';') {  // escaped ';'
        value += ';';
        i = semi + 2;
        continue;
      }
      i = semi;
      closed = true;
      break;
    }
    if (!closed) break;  // a pair without its closing ';' is junk too
    pos = i + 1;
    if (first) {
      if (key != kCmdKey || value.empty()) break;
      cmd.name = std::move(value);
      first = false;
    } else {
      cmd.fields.emplace_back(std::move(key), std::move(value));
    }
  }
  if (first) return make_error(cat("PMI-2 message does not start with cmd=NAME; : ", quoted(body)));
  return cmd;
}

}  // namespace

const std::string* Command::find(std::string_view key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

Result<Command> decode(const Frame& frame) {
  return frame.wire == Wire::pmi1 ? decode_pmi1(frame.body) : decode_pmi2(frame.body);
}

namespace {

// Appends `value` with every ';' doubled (PMI-2's only escape), a run at a time.
void append_escaped(std::string& out, std::string_view value) {
  for (size_t semi; (semi = value.find(';')) != std::string_view::npos;) {
    out.append(value.data(), semi + 1).append(1, ';');
    value.remove_prefix(semi + 1);
  }
  out.append(value);
}

}  // namespace

std::string escape_pmi2(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  append_escaped(out, value);
  return out;
}

// Hot path (every kvs-get answer): plain appends into one reserved buffer, no streams.
std::string encode(Wire wire, const Response& response) {
  size_t size = kPmi2HeaderBytes + response.name.size() + 8;
  for (const auto& [key, value] : response.fields) size += key.size() + value.size() + 2;
  std::string out;
  out.reserve(size + size / 8);
  if (wire == Wire::pmi1) {
    out.append("cmd=").append(response.name);
    for (const auto& [key, value] : response.fields)
      out.append(" ").append(key).append("=").append(value);
    out += '\n';
    return out;
  }
  out.append(kPmi2HeaderBytes, ' ');
  out.append("cmd=");
  append_escaped(out, response.name);
  out += ';';
  for (const auto& [key, value] : response.fields) {
    out.append(key).append("=");
    append_escaped(out, value);
    out += ';';
  }
  std::string_view body(out.data() + kPmi2HeaderBytes, out.size() - kPmi2HeaderBytes);
  // Callers bound values by the value limit, so a body never outgrows the length field.
  assert(body.size() <= kPmi2MaxEncodableBody);
  // The length, left-aligned and space-padded in the first six bytes (as MPICH writes it).
  std::string length = std::to_string(body.size());
  out.replace(0, length.size(), length);
  return out;
}

}  // namespace lattice::pmi
