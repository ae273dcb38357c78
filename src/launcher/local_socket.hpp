// A one-shot client's conversation with its node's agent over a local Unix socket (the escape
// hatch's exec socket, the user door), in the agent's rpc framing over a blocking socket: these
// are short client steps, not the loop, so plain blocking reads and writes are the simple choice.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "net/fd.hpp"
#include "rpc/transport.hpp"

namespace lattice::launcher {

// Connected to `path`; `what` names it in errors ("the agent's user door"). With `trusted_uid`
// set, the listening process must run as root or as that uid (SO_PEERCRED): a socket anyone
// could have made is not taken for the agent's.
Result<net::UniqueFd> connect_local(const std::string& path, const std::string& what,
                                    std::optional<uid_t> trusted_uid = std::nullopt);

bool write_all(int fd, std::string_view bytes);

// An rpc session's bytes on a blocking socket it does not own.
class SocketTransport : public rpc::ByteTransport {
 public:
  explicit SocketTransport(int fd) : fd_(fd) {}
  void write(std::string bytes) override { ok_ = ok_ && write_all(fd_, bytes); }
  void close() override;
  bool ok() const { return ok_; }

 private:
  int fd_;
  bool ok_ = true;
};

}  // namespace lattice::launcher
