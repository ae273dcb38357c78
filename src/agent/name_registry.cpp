#include "agent/name_registry.hpp"

#include "base/strings.hpp"
#include "pmi/limits.hpp"

namespace lattice::agent {

Result<std::string> NameRegistry::apply(pmi::NameOp op, const std::string& name,
                                        const std::string& port) {
  // The engine checked these on the rank's node; a peer's message is checked again here.
  if (name.empty() || name.size() > pmi::kMaxServiceNameBytes || port.size() > pmi::kMaxValueBytes)
    return make_error("a malformed name request");
  auto it = names_.find(name);
  switch (op) {
    case pmi::NameOp::publish:
      if (it != names_.end()) return make_error(cat("service '", name, "' is already published"));
      if (names_.size() >= kMaxPublishedNames)
        return make_error(cat("this launch has published ", kMaxPublishedNames, " names already"));
      names_.emplace(name, port);
      return std::string();
    case pmi::NameOp::unpublish:
      if (it == names_.end()) return make_error(cat("service '", name, "' is not published"));
      names_.erase(it);
      return std::string();
    case pmi::NameOp::lookup:
      if (it == names_.end()) return make_error(cat("service '", name, "' is not published"));
      return it->second;
  }
  return make_error("unknown name operation");
}

}  // namespace lattice::agent
