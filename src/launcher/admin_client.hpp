// `lattice admin status`: one request line to an agent's admin socket, its answer to stdout.
// A short blocking exchange; the CLI has no event loop to keep responsive.
#pragma once

#include <string>
#include <vector>

#include "admin/protocol.hpp"
#include "base/result.hpp"

namespace lattice::launcher {

inline constexpr const char* kDefaultAdminSocket = "/run/lattice/agentd.sock";

// `lattice admin [--socket PATH] REQUEST...` (--socket may come anywhere): the request line.
// With --agents LIST (status only), the agents are asked over TCP with the cluster key
// (--key-file, else $LATTICE_KEY_FILE) instead of one agent over its socket.
struct AdminArgs {
  std::string socket = kDefaultAdminSocket;
  std::string request;  // the words, joined by spaces; empty: none given
  bool help = false;
  std::string agents;    // --agents' list, as given
  std::string key_file;  // --key-file
  bool json = false;
  std::string launch_id;  // with --agents: status's LAUNCH_ID
};
Result<AdminArgs> parse_admin_args(const std::vector<std::string>& args);

// The agent's answer to one request line, read to its end (or to admin::kMaxAnswerBytes).
Result<admin::Answer> admin_request(const std::string& socket_path, const std::string& request);

}  // namespace lattice::launcher
