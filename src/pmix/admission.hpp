// Who may reach libpmix: a PMIx client is let through only as a rank of a namespace this agent
// registered, from a socket the kernel says belongs to that namespace's user (or root), and
// only with a handshake libpmix will accept as it stands. libpmix itself believes the uid a
// TCP client claims, and in OpenPMIx 4.2 a connection it refuses after looking the rank up
// frees that rank's record while the namespace still holds it (fixed upstream after 4.2.2): so
// nothing it would refuse may reach it either. Pure: the caller supplies the kernel's answer.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "base/result.hpp"
#include "pmix/client_hello.hpp"

namespace lattice::pmix {

// A namespace as the agent registered it with libpmix: its user and its ranks on this node.
struct RegisteredNamespace {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::set<int> local_ranks;
};
using Registry = std::map<std::string, RegisteredNamespace>;

// Whether the client that sent `hello`, from a socket owned by `socket_uid`, may be handed to
// libpmix. The error says why not, naming the uid.
Status admit(const ClientHello& hello, uint32_t socket_uid, const Registry& registry);

// Whether `socket_uid` could be admitted to any namespace (checked before its handshake is
// read, so that users with no job here cannot even make the agent wait for one).
bool may_connect(uint32_t socket_uid, const Registry& registry);

}  // namespace lattice::pmix
