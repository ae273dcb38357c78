// The test vectors of docs/protocol.md, read from the document at run time (its path is compiled
// in as LATTICE_PROTOCOL_DOC), so that the document and the code cannot drift apart. Vectors sit
// in fenced blocks tagged "vectors TAG", one `name = hex` a line; a line that starts with a space
// continues the value above it, and a line that starts with '#' is a comment.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice::testing {

class ProtocolVectors {
 public:
  // Every vector of the blocks tagged `tag`; an error names the line that is not one.
  static Result<ProtocolVectors> load(std::string_view tag);

  // The bytes of vector `name`; a missing one fails the test.
  const std::string& bytes(const std::string& name);
  // Names no test asked for: a vector nothing checks would be one that can drift.
  std::vector<std::string> unused() const;

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> used_;
};

}  // namespace lattice::testing
