#include "secure/identity.hpp"

#include "base/strings.hpp"

namespace lattice::secure {

std::string_view role_name(Role role) {
  switch (role) {
    case Role::launcher:
      return "launcher";
    case Role::agent:
      return "agent";
    case Role::user:
      return "user";
  }
  return "?";
}

std::string describe(const Identity& identity) {
  return cat(role_name(identity.role), ' ', identity.name);
}

bool valid_identity_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxIdentityName) return false;
  for (unsigned char c : name)
    if (c < 0x21 || c > 0x7e) return false;
  return true;
}

std::string encode_identity(const Identity& identity) {
  std::string out;
  out.push_back(static_cast<char>(identity.role));
  out.push_back(static_cast<char>(identity.name.size()));
  out += identity.name;
  return out;
}

std::optional<Identity> decode_identity(std::string_view bytes) {
  if (bytes.size() < 2) return std::nullopt;
  auto role = static_cast<uint8_t>(bytes[0]);
  if (role != static_cast<uint8_t>(Role::launcher) && role != static_cast<uint8_t>(Role::agent))
    return std::nullopt;
  size_t length = static_cast<uint8_t>(bytes[1]);
  if (bytes.size() != 2 + length) return std::nullopt;
  std::string_view name = bytes.substr(2);
  if (!valid_identity_name(name)) return std::nullopt;
  return Identity{static_cast<Role>(role), std::string(name)};
}

}  // namespace lattice::secure
