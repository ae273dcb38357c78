#include "launcher/allocation_door.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/strings.hpp"
#include "launcher/local_socket.hpp"
#include "rpc/session.hpp"

namespace lattice::launcher {
namespace {

constexpr const char* kDefaultUserDoor = "/run/lattice/user.sock";
constexpr long kAnswerSeconds = 15;

}  // namespace

std::string user_door_path() {
  const char* path = std::getenv("LATTICE_USER_SOCKET");
  return path && *path ? path : kDefaultUserDoor;
}

Result<wire::AllocationInfo> ask_allocation(const std::string& socket, const std::string& id) {
  auto connected = connect_local(socket, "the agent's user door", ::getuid());
  if (!connected) return connected.error();
  const int fd = connected->get();
  // An agent answers at once from its table: one that does not is stuck, and said so.
  timeval patience{kAnswerSeconds, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  SocketTransport transport(fd);
  std::optional<Result<wire::AllocationInfo>> answer;
  rpc::Session session(transport, {});
  session.call(
      wire::allocation_info_request(id), UINT64_MAX, [&](Result<schema::Envelope::Reader> reply) {
        if (!reply) {
          answer = Result<wire::AllocationInfo>(reply.error());
        } else if (reply->getBody().which() != schema::Envelope::Body::ALLOCATION_INFO) {
          answer =
              Result<wire::AllocationInfo>(make_error("the agent answered with something else"));
        } else {
          answer = wire::decode_allocation_info(reply->getBody().getAllocationInfo());
        }
      });
  char buffer[65536];
  bool silent = false;
  while (!answer && transport.ok()) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    silent = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    if (n <= 0) break;
    session.receive(std::string_view(buffer, static_cast<size_t>(n)));
  }
  if (!answer)
    return make_error(cat("the agent at ", socket,
                          silent ? cat(" did not answer within ", kAnswerSeconds, " s")
                                 : std::string(" closed the connection")));
  return std::move(*answer);
}

JobUserInfo allocation_user(const wire::AllocationInfo& info) {
  return JobUserInfo{info.user.uid, info.user.gid,
                     info.user.groups.value_or(std::vector<uint32_t>{}), info.user.name};
}

Result<std::vector<AgentAddress>> door_nodes(const wire::AllocationInfo& info, int nodes) {
  const int held = static_cast<int>(info.nodes.size());
  if (nodes > held)
    return make_error(cat("-N ", nodes, ": allocation ", info.id, " holds ", held, " nodes"));
  std::vector<AgentAddress> out;
  const auto add = [&](const wire::PeerInfo& p) {
    out.push_back({p.node_id, p.host, p.port, true});
  };
  add(info.nodes[info.node_index]);
  for (size_t i = 0; i < info.nodes.size(); ++i)
    if (i != info.node_index) add(info.nodes[i]);
  out.resize(static_cast<size_t>(nodes > 0 ? nodes : held));
  return out;
}

}  // namespace lattice::launcher
