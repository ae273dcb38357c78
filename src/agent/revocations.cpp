#include "agent/revocations.hpp"

namespace lattice::agent {

Result<secure::RevokedKeys> load_revocations(const config::AgentConfig& cfg) {
  if (cfg.revoked.empty()) return secure::RevokedKeys{};
  if (cfg.certificate_authority.empty())
    return make_error(
        "security.revoked is set but security.certificate_authority is not: without an "
        "authority no certificate is checked, so none can be revoked");
  return secure::load_revoked_file(cfg.revoked);
}

}  // namespace lattice::agent
