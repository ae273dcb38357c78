// Who is at the other end of a sealed link, as its handshake proved it: a role and a name (the
// node id of an agent, a label for a launcher). Every authorisation decision reads this, never
// a message field. Encoded inside the handshake as role(1) | length(1) | name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lattice::secure {

// `user`: a local user on the agent's user door (a Unix socket), named by uid; never proved in a
// handshake (decode_identity refuses it), only given by the kernel's SO_PEERCRED.
enum class Role : uint8_t { launcher = 1, agent = 2, user = 3 };

struct Identity {
  Role role = Role::agent;
  std::string name;
};

std::string_view role_name(Role role);
// "agent n3", "launcher lattice@host:1234"
std::string describe(const Identity& identity);

// Names are 1..255 printable ASCII bytes without spaces (node ids, host names, labels).
constexpr size_t kMaxIdentityName = 255;
bool valid_identity_name(std::string_view name);

std::string encode_identity(const Identity& identity);
// Nullopt for anything but exactly one well-formed identity.
std::optional<Identity> decode_identity(std::string_view bytes);

}  // namespace lattice::secure
