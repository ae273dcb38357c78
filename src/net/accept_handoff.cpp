#include "net/accept_handoff.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <utility>

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::net {
namespace {

// Shared between the loop and the library's accepting thread.
struct State {
  std::mutex mutex;
  int fd = -1;  // the taken-over listener; -1: none
  std::function<void()> wake;
  std::deque<int> arrived;      // accepted there, for the loop to vet
  std::deque<int> vetted;       // for the library's next accept()
  bool ring_in_flight = false;  // the loop connected; accept() has not seen it yet
  uint16_t ring_port = 0;       // its source port
  bool rung = false;            // accept() consumed the ring: the loop closes its end
};

State& state() {
  static State s;
  return s;
}

void* g_interposer = nullptr;

uint16_t port_of(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(ss).sin_port);
  return 0;
}

bool from_loopback(const sockaddr_storage& ss) {
  return ss.ss_family == AF_INET &&
         (ntohl(reinterpret_cast<const sockaddr_in&>(ss).sin_addr.s_addr) >> 24) == 127;
}

std::string sys_error(const char* call) { return cat(call, ": ", std::strerror(errno)); }

}  // namespace

bool handoff_accept(int fd, sockaddr* addr, socklen_t* addrlen, int* result) {
  State& st = state();
  std::function<void()> wake;
  int error = 0;
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    if (st.fd < 0 || fd != st.fd) return false;
    bool tell = false;
    for (;;) {  // everything that waits (the listener is non-blocking)
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      int c = ::accept4(fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
      if (c < 0) break;
      if (st.ring_in_flight && from_loopback(peer) && port_of(peer) == st.ring_port) {
        ::close(c);
        st.ring_in_flight = false;
        st.rung = true;
      } else {
        st.arrived.push_back(c);
      }
      tell = true;
    }
    if (!st.vetted.empty()) {
      *result = st.vetted.front();
      st.vetted.pop_front();
      if (addr && addrlen && ::getpeername(*result, addr, addrlen) != 0) *addrlen = 0;
    } else {
      *result = -1;
      error = ECONNABORTED;  // libpmix's listener takes it as "go on listening"
    }
    if (!st.vetted.empty()) tell = true;  // the loop rings again for the next one
    if (tell) wake = st.wake;
  }
  if (wake) wake();
  if (error) errno = error;
  return true;
}

void accept_interposer_present(void* function) { g_interposer = function; }

Result<std::unique_ptr<AcceptHandoff>> AcceptHandoff::install(int listening_fd,
                                                              std::function<void()> arrived) {
  // Without accept() of our own, libraries would accept straight from the socket.
  void* bound = ::dlsym(RTLD_DEFAULT, "accept");
  if (!g_interposer || bound != g_interposer)
    return make_error(
        "this process's accept() is not lattice-agentd's own: connections could "
        "not be vetted");
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(listening_fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return make_error(sys_error("getsockname"));
  if (!from_loopback(ss))
    return make_error("the listener to take over is not on an IPv4 loopback address");
  int flags = ::fcntl(listening_fd, F_GETFL);
  if (flags < 0 || ::fcntl(listening_fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return make_error(sys_error("fcntl(O_NONBLOCK)"));
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (st.fd >= 0) return make_error("a listener is taken over already");
  st.fd = listening_fd;
  st.wake = std::move(arrived);
  return std::unique_ptr<AcceptHandoff>(new AcceptHandoff(listening_fd, port_of(ss)));
}

AcceptHandoff::~AcceptHandoff() {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.fd = -1;
  st.wake = nullptr;
  for (auto* queue : {&st.arrived, &st.vetted}) {
    for (int c : *queue) ::close(c);
    queue->clear();
  }
  st.ring_in_flight = st.rung = false;
}

std::vector<UniqueFd> AcceptHandoff::take_arrived() {
  State& st = state();
  std::vector<UniqueFd> out;
  bool ring_now = false;
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    for (int c : st.arrived) out.emplace_back(c);
    st.arrived.clear();
    if (std::exchange(st.rung, false)) rings_.clear();
    ring_now = !st.vetted.empty() && !st.ring_in_flight;
  }
  if (ring_now)
    if (auto rang = hand_over(UniqueFd()); !rang)
      LAT_LOG(warn, "handoff", "cannot ring the listener: ", rang.error().message);
  return out;
}

Status AcceptHandoff::hand_over(UniqueFd connection) {
  State& st = state();
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    if (connection) st.vetted.push_back(connection.release());
    if (st.vetted.empty() || st.ring_in_flight) return {};
  }
  // Bound first, so that accept() knows the ring by its port before it can arrive.
  UniqueFd ring(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!ring) return make_error(sys_error("socket"));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sockaddr_in from = to;
  if (::bind(ring.get(), reinterpret_cast<sockaddr*>(&from), sizeof from) != 0)
    return make_error(sys_error("bind"));
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  if (::getsockname(ring.get(), reinterpret_cast<sockaddr*>(&bound), &len) != 0)
    return make_error(sys_error("getsockname"));
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    st.ring_port = port_of(bound);
    st.ring_in_flight = true;
  }
  to.sin_port = htons(port_);
  if (::connect(ring.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 &&
      errno != EINPROGRESS) {
    std::string error = sys_error("connect");
    std::lock_guard<std::mutex> lock(st.mutex);
    st.ring_in_flight = false;
    return make_error(error);
  }
  rings_.push_back(std::move(ring));
  return {};
}

std::vector<int> listening_tcp_fds() {
  std::vector<int> out;
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    auto fd = parse_int(e->d_name);
    if (!fd || *fd < 0 || *fd == ::dirfd(d)) continue;
    int listening = 0, protocol = 0;
    socklen_t len = sizeof listening;
    if (::getsockopt(static_cast<int>(*fd), SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0)
      continue;
    len = sizeof protocol;
    if (listening &&
        ::getsockopt(static_cast<int>(*fd), SOL_SOCKET, SO_PROTOCOL, &protocol, &len) == 0 &&
        protocol == IPPROTO_TCP)
      out.push_back(static_cast<int>(*fd));
  }
  ::closedir(d);
  return out;
}

}  // namespace lattice::net
