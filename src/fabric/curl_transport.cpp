// The curl <-> libuv bridge. Order matters (docs/building.md, libcurl multi on the loop): curl's
// callbacks only record interest; socket_action runs from the loop's callbacks, never from
// curl's; a finished exchange is read, removed from the multi handle, and only then completed
// (its callback may start another exchange).
#include "fabric/curl_transport.hpp"

#include <cstdlib>
#include <string>

#include "base/log.hpp"
#include "base/strings.hpp"
#include "fabric/curl_library.hpp"

namespace lattice::fabric {

struct CurlTransport::Exchange {
  const CurlLibrary* curl = nullptr;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;  // libcurl's copies of the plain header lines
  // Our own list node around the request's Authorization line (in guarded memory), heading
  // `headers`: curl_slist_append would copy the token into memory of libcurl's.
  curl_slist authorization{};
  HttpRequest request;
  HttpOutcome outcome;
  std::function<void(HttpOutcome)> done;
  size_t max_body = 0;
  bool too_large = false;
  char error[CURL_ERROR_SIZE] = {};
  ~Exchange() {
    if (easy) curl->easy_cleanup(easy);
    curl->slist_free_all(headers);
  }
};

namespace {

CURLM* multi(void* m) { return static_cast<CURLM*>(m); }

size_t write_body(char* data, size_t size, size_t count, void* user) {
  auto* x = static_cast<CurlTransport::Exchange*>(user);
  size_t n = size * count;
  if (x->outcome.body.size() + n > x->max_body) {
    x->too_large = true;
    return 0;  // CURLE_WRITE_ERROR
  }
  x->outcome.body.append(data, n);  // reserved up front: no reallocation leaves a copy behind
  return n;
}

HttpOutcome::Transport classify(CURLcode rc) {
  switch (rc) {
    case CURLE_OK:
      return HttpOutcome::Transport::ok;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
      return HttpOutcome::Transport::connect_failed;
    case CURLE_OPERATION_TIMEDOUT:
      return HttpOutcome::Transport::timed_out;
    default:
      return HttpOutcome::Transport::failed;
  }
}

}  // namespace

CurlTransport::CurlTransport(net::Loop& loop, TransportOptions options)
    : loop_(loop), options_(options), multi_(nullptr), timer_(loop), deferred_timer_(loop) {
  auto lib = curl_library();
  if (!lib) {
    unavailable_ = lib.error().message;  // every exchange fails with it
    return;
  }
  curl_ = *lib;
  multi_ = curl_->multi_init();
  if (!multi_) std::abort();
  curl_->multi_setopt(
      multi(multi_), CURLMOPT_SOCKETFUNCTION,
      +[](CURL*, curl_socket_t fd, int what, void* self, void*) -> int {
        static_cast<CurlTransport*>(self)->on_socket(fd, what);
        return 0;
      });
  curl_->multi_setopt(multi(multi_), CURLMOPT_SOCKETDATA, this);
  curl_->multi_setopt(
      multi(multi_), CURLMOPT_TIMERFUNCTION, +[](CURLM*, long timeout_ms, void* self) -> int {
        static_cast<CurlTransport*>(self)->on_timer(timeout_ms);
        return 0;
      });
  curl_->multi_setopt(multi(multi_), CURLMOPT_TIMERDATA, this);
}

CurlTransport::~CurlTransport() {
  if (!curl_) return;
  for (auto& [raw, exchange] : running_) curl_->multi_remove_handle(multi(multi_), exchange->easy);
  running_.clear();
  sockets_.clear();
  curl_->multi_cleanup(multi(multi_));
}

void CurlTransport::send(HttpRequest request, std::function<void(HttpOutcome)> done) {
  auto x = std::make_unique<Exchange>();
  x->request = std::move(request);
  x->done = std::move(done);
  x->max_body = options_.max_body_bytes;
  if (!curl_) {
    x->outcome = {HttpOutcome::Transport::failed, unavailable_, 0, {}};
    return complete_later(std::move(x));
  }
  x->curl = curl_;
  x->outcome.body.reserve(options_.max_body_bytes);
  x->easy = curl_->easy_init();
  if (!x->easy) {
    x->outcome = {HttpOutcome::Transport::failed, "libcurl cannot make a handle", 0, {}};
    return complete_later(std::move(x));
  }
  CURL* e = x->easy;
  const HttpRequest& r = x->request;
  curl_->easy_setopt(e, CURLOPT_URL, r.url.c_str());
  curl_->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_->easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_->easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  curl_->easy_setopt(e, CURLOPT_PROXY, "");  // proxy variables in the environment do not apply
  curl_->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout_ms));
  curl_->easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_ms));
  curl_->easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
                     static_cast<curl_off_t>(options_.max_body_bytes));
  curl_->easy_setopt(e, CURLOPT_WRITEFUNCTION, write_body);
  curl_->easy_setopt(e, CURLOPT_WRITEDATA, x.get());
  curl_->easy_setopt(e, CURLOPT_ERRORBUFFER, x->error);
  curl_->easy_setopt(e, CURLOPT_PRIVATE, x.get());
  // HTTP/1.1 even over TLS: an HTTP/2 connection would keep the Authorization header in its
  // HPACK table, in memory that is not ours to wipe.
  curl_->easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  x->headers = curl_->slist_append(x->headers, "Accept: application/json");
  if (r.method == "POST") {
    x->headers = curl_->slist_append(x->headers, "Content-Type: application/json");
    curl_->easy_setopt(e, CURLOPT_POSTFIELDS, r.body.c_str());
    curl_->easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  } else if (r.method != "GET") {
    curl_->easy_setopt(e, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  }
  curl_slist* headers = x->headers;
  if (r.authorization) {
    // libcurl reads the list for the request's life, and never frees or changes it.
    x->authorization = curl_slist{const_cast<char*>(r.authorization), x->headers};
    headers = &x->authorization;
  }
  curl_->easy_setopt(e, CURLOPT_HTTPHEADER, headers);
  if (CURLMcode rc = curl_->multi_add_handle(multi(multi_), e); rc != CURLM_OK) {
    x->outcome = {HttpOutcome::Transport::failed, curl_->multi_strerror(rc), 0, {}};
    return complete_later(std::move(x));
  }
  Exchange* raw = x.get();
  running_.emplace(raw, std::move(x));
}

void CurlTransport::complete_later(std::unique_ptr<Exchange> exchange) {
  deferred_.push_back(std::move(exchange));
  deferred_timer_.start(0, 0, [this] {
    auto ready = std::move(deferred_);
    deferred_.clear();
    for (auto& x : ready) x->done(std::move(x->outcome));
  });
}

void CurlTransport::on_socket(int fd, int what) {
  if (what == CURL_POLL_REMOVE) {
    sockets_.erase(fd);
    return;
  }
  auto it = sockets_.find(fd);
  if (it == sockets_.end()) {
    auto watcher = net::FdWatcher::watch(loop_, fd);
    if (!watcher) {
      LAT_LOG(warn, "fabric", watcher.error().message);
      return;  // curl's timeout ends the exchange
    }
    it = sockets_.emplace(fd, std::move(watcher.value())).first;
  }
  bool in = what == CURL_POLL_IN || what == CURL_POLL_INOUT;
  bool out = what == CURL_POLL_OUT || what == CURL_POLL_INOUT;
  it->second->start(in, out, [this, fd](net::FdWatcher::Events e) {
    int events = (e.readable ? CURL_CSELECT_IN : 0) | (e.writable ? CURL_CSELECT_OUT : 0) |
                 (e.error ? CURL_CSELECT_ERR : 0);
    act(fd, events);
  });
}

void CurlTransport::on_timer(long timeout_ms) {
  if (timeout_ms < 0) return timer_.stop();
  // Even a 0 ms timeout waits for the loop: socket_action must not run inside curl's callback.
  timer_.start(static_cast<uint64_t>(timeout_ms), 0, [this] { act(CURL_SOCKET_TIMEOUT, 0); });
}

void CurlTransport::act(int fd, int events) {
  int running = 0;
  curl_->multi_socket_action(multi(multi_), fd, events, &running);
  harvest();
}

void CurlTransport::harvest() {
  std::vector<std::unique_ptr<Exchange>> finished;
  int left = 0;
  while (CURLMsg* msg = curl_->multi_info_read(multi(multi_), &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Exchange* x = nullptr;
    curl_->easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &x);
    CURLcode rc = msg->data.result;
    auto it = running_.find(x);
    if (it == running_.end()) continue;
    x->outcome.transport = classify(rc);
    if (rc == CURLE_OK) {
      curl_->easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->outcome.status);
    } else if (x->too_large || rc == CURLE_FILESIZE_EXCEEDED) {
      x->outcome.transport = HttpOutcome::Transport::failed;
      x->outcome.error = cat("the answer is longer than ", options_.max_body_bytes, " bytes");
    } else {
      x->outcome.error = x->error[0] ? x->error : curl_->easy_strerror(rc);
    }
    curl_->multi_remove_handle(multi(multi_), x->easy);
    finished.push_back(std::move(it->second));
    running_.erase(it);
  }
  for (auto& x : finished) x->done(std::move(x->outcome));
}

}  // namespace lattice::fabric
