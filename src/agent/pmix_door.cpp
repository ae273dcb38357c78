#include "agent/pmix_door.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "net/loopback_owner.hpp"
#include "pmix/client_hello.hpp"

namespace lattice::agent {
namespace {

// A rank's PMIx_Init sends its handshake as soon as it connects; a client that has not within
// this long is dropped (it holds nothing of libpmix's meanwhile).
constexpr uint64_t kHelloDeadlineMs = 5000;
// Connections being vetted at once; more are refused at once.
constexpr size_t kMaxPending = 256;

bool set_rcvlowat(int fd, size_t bytes) {
  int n = static_cast<int>(bytes);
  return ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &n, sizeof n) == 0;
}

// The client closed its end (readable with fewer bytes than wanted would otherwise spin).
bool peer_closed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

}  // namespace

struct PmixDoor::Pending {
  net::UniqueFd fd;
  uint32_t uid = 0;
  size_t want = pmix::kHelloHeaderBytes;  // bytes to peek before the next step
  std::unique_ptr<net::FdWatcher> watcher;
  std::unique_ptr<net::Timer> deadline;
};

PmixDoor::PmixDoor(net::Loop& loop, std::unique_ptr<net::AcceptHandoff> handoff)
    : loop_(loop), handoff_(std::move(handoff)) {}

PmixDoor::~PmixDoor() = default;

void PmixDoor::allow(const std::string& nspace, pmix::RegisteredNamespace job) {
  registry_[nspace] = std::move(job);
}

void PmixDoor::forget(const std::string& nspace) { registry_.erase(nspace); }

void PmixDoor::arrived() {
  for (auto& fd : handoff_->take_arrived()) watch(std::move(fd));
}

void PmixDoor::watch(net::UniqueFd fd) {
  auto uid = net::loopback_peer_uid(fd.get());
  if (!uid) {
    LAT_LOG_LIMITED(refusals_, warn, "auth", "no owner",
                    "refused a PMIx client: ", uid.error().message);
    return;
  }
  if (!pmix::may_connect(*uid, registry_)) {
    LAT_LOG_LIMITED(refusals_, warn, "auth", "no launch", "refused a PMIx client from uid ", *uid,
                    ": no PMIx launch of that user runs here", log_fields({{"uid", cat(*uid)}}));
    return;
  }
  if (pending_.size() >= kMaxPending) {
    LAT_LOG_LIMITED(refusals_, warn, "auth", "full", "refused a PMIx client from uid ", *uid, ": ",
                    kMaxPending, " connections are being vetted already",
                    log_fields({{"uid", cat(*uid)}}));
    return;
  }
  auto pending = std::make_unique<Pending>();
  pending->uid = *uid;
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0 ||
      !set_rcvlowat(fd.get(), pending->want)) {
    LAT_LOG(warn, "pmix", "cannot watch a PMIx client: ", std::strerror(errno),
            log_fields({{"uid", cat(*uid)}}));
    return;
  }
  auto watcher = net::FdWatcher::watch(loop_, fd.get());
  if (!watcher) {
    LAT_LOG(warn, "pmix", "cannot watch a PMIx client: ", watcher.error().message,
            log_fields({{"uid", cat(*uid)}}));
    return;
  }
  pending->fd = std::move(fd);
  pending->watcher = std::move(watcher.value());
  pending->deadline = std::make_unique<net::Timer>(loop_);
  const uint64_t id = next_id_++;
  pending->watcher->start(true, false, [this, id](net::FdWatcher::Events) { read_hello(id); });
  pending->deadline->start(kHelloDeadlineMs, 0, [this, id] {
    refuse(id, "silent", cat("no PMIx handshake within ", kHelloDeadlineMs / 1000, " s"));
  });
  pending_[id] = std::move(pending);
}

void PmixDoor::read_hello(uint64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  Pending& p = *it->second;
  std::string bytes(p.want, '\0');
  ssize_t n = ::recv(p.fd.get(), bytes.data(), bytes.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0 || (static_cast<size_t>(n) < p.want && peer_closed(p.fd.get()))) {
    LAT_LOG(debug, "pmix", "a PMIx client from uid ", p.uid, " left before its handshake");
    pending_.erase(it);
    return;
  }
  if (static_cast<size_t>(n) < p.want) return;  // the rest is on its way
  if (p.want == pmix::kHelloHeaderBytes) {
    auto size = pmix::hello_size(bytes);
    if (!size) return refuse(id, "malformed", cat("uid ", p.uid, ": ", size.error().message));
    p.want = *size;
    if (!set_rcvlowat(p.fd.get(), p.want))
      return refuse(id, "socket", cat("uid ", p.uid, ": SO_RCVLOWAT: ", std::strerror(errno)));
    return read_hello(id);  // it may all be there already
  }
  auto hello = pmix::decode_hello(bytes);
  if (!hello) return refuse(id, "malformed", cat("uid ", p.uid, ": ", hello.error().message));
  if (auto allowed = pmix::admit(*hello, p.uid, registry_); !allowed)
    return refuse(id, "not admitted", allowed.error().message);
  LAT_LOG(debug, "pmix", "rank ", hello->rank, " of ", hello->nspace, " (uid ", p.uid,
          ") goes through to libpmix");
  admit(id);
}

void PmixDoor::refuse(uint64_t id, std::string_view cause, const std::string& why) {
  auto it = pending_.find(id);
  LAT_LOG_LIMITED(
      refusals_, warn, "auth", cause, "refused a PMIx client: ", why,
      log_fields({{"uid", it == pending_.end() ? std::string("-") : cat(it->second->uid)}}));
  pending_.erase(id);  // closes it: libpmix never saw it
}

void PmixDoor::admit(uint64_t id) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  net::UniqueFd fd = std::move(it->second->fd);
  const uint32_t uid = it->second->uid;
  pending_.erase(it);
  set_rcvlowat(fd.get(), 1);
  if (auto handed = handoff_->hand_over(std::move(fd)); !handed)
    LAT_LOG(warn, "pmix", "cannot hand a PMIx client to libpmix: ", handed.error().message,
            log_fields({{"uid", cat(uid)}}));
}

}  // namespace lattice::agent
