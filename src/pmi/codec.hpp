// PMI messages as typed values: a Frame decodes to a Command {wire, name, ordered fields}; a
// Response encodes to the bytes of either wire. PMI-1: `cmd=x k=v ...\n`; PMI-2: `%-6d` length
// then `cmd=x;k=v;...;` with `;` inside values doubled (`;;`), as Slurm's libpmi2 does.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "pmi/framer.hpp"

namespace lattice::pmi {

using Fields = std::vector<std::pair<std::string, std::string>>;

struct Command {
  Wire wire = Wire::pmi1;
  std::string name;  // `cmd=` value (PMI-1 `mcmd=spawn` gives "spawn")
  Fields fields;     // in wire order, without the cmd field
  // The first field called `key`, or nullptr.
  const std::string* find(std::string_view key) const;
};

struct Response {
  std::string name;
  Fields fields;
};

// PMI-1 line: tokens split at spaces, each at its first '='; a token without '=' continues the
// previous value (free text such as an abort message). `mcmd=` requests hold one `k=v` per line
// up to `endcmd`. PMI-2 body: pairs in order; parsing stops at a NUL byte or at a segment with
// no '=' or no closing ';' (MPICH 4.0.2 sends 6 junk bytes after the last ';', trap T1).
// Errors name what is wrong and quote the offending bytes.
Result<Command> decode(const Frame& frame);

// PMI-1 values are written as they are: callers make free text a token (text.hpp) and refuse
// values a PMI-1 client cannot read back.
std::string encode(Wire wire, const Response& response);

// PMI-2 value escaping: ';' -> ";;".
std::string escape_pmi2(std::string_view value);

}  // namespace lattice::pmi
