// Lists of texts between plain vectors and Cap'n Proto, for every codec of this library.
#pragma once

#include <string>
#include <vector>

#include "lattice.capnp.h"

namespace lattice::wire {

// `list` as initialised with values.size() elements.
inline void set_texts(capnp::List<capnp::Text>::Builder list,
                      const std::vector<std::string>& values) {
  for (unsigned i = 0; i < list.size(); ++i) list.set(i, values[i]);
}

inline std::vector<std::string> texts_of(capnp::List<capnp::Text>::Reader list) {
  std::vector<std::string> out;
  out.reserve(list.size());
  for (auto text : list) out.emplace_back(text);
  return out;
}

}  // namespace lattice::wire
