#include "launcher/admin_client.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/command_line.hpp"
#include "base/strings.hpp"

namespace lattice::launcher {

Result<AdminArgs> parse_admin_args(const std::vector<std::string>& args) {
  AdminArgs out;
  CLI::App cli;
  Options w(cli);
  w.text("--socket", out.socket);
  w.text("--agents", out.agents);
  w.text("--key-file", out.key_file);
  w.flag("--json", [&out] { out.json = true; });
  // The options, wherever they are, go to the parser; the other words are the request.
  std::vector<std::string> options;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].size() < 2 || args[i][0] != '-') {
      out.request += cat(out.request.empty() ? "" : " ", args[i]);
      continue;
    }
    options.push_back(args[i]);
    if ((args[i] == "--socket" || args[i] == "--agents" || args[i] == "--key-file") &&
        i + 1 < args.size())
      options.push_back(args[++i]);
  }
  auto line = w.parse(options);
  if (!line) return line.error();
  out.help = line->help;
  constexpr std::string_view kStatus = "status";
  bool status = out.request.rfind(kStatus, 0) == 0 &&
                (out.request.size() == kStatus.size() || out.request[kStatus.size()] == ' ');
  if (out.json && !status) return make_error("--json goes with status only");
  if (!out.agents.empty()) {
    if (!status) return make_error("--agents goes with status only");
    std::string rest = out.request.substr(std::min(out.request.size(), kStatus.size() + 1));
    if (rest.find(' ') != std::string::npos) return make_error("status takes one LAUNCH_ID");
    out.launch_id = rest;
  } else if (!out.key_file.empty()) {
    return make_error("--key-file goes with --agents");
  }
  // "status [ID]" as JSON; the other requests have no JSON form.
  if (out.json) out.request = cat("status-json", out.request.substr(kStatus.size()));
  return out;
}

Result<admin::Answer> admin_request(const std::string& socket_path, const std::string& request) {
  sockaddr_un addr{};
  if (socket_path.size() >= sizeof addr.sun_path)
    return make_error(cat("socket path too long: ", socket_path));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(cat("socket: ", std::strerror(errno)));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    return make_error(cat("cannot connect to ", socket_path, ": ", std::strerror(errno)));
  std::string line = request + "\n";
  if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
    return make_error(cat("cannot send to ", socket_path, ": ", std::strerror(errno)));
  admin::AnswerBuffer answer;
  char buf[4096];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(cat("reading ", socket_path, ": ", std::strerror(errno)));
    if (n == 0 || !answer.add(std::string_view(buf, static_cast<size_t>(n)))) break;
  }
  return answer.take();
}

}  // namespace lattice::launcher
