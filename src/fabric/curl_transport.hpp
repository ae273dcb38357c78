// HttpTransport over libcurl's multi interface, driven by the launcher's libuv loop: curl's
// socket callback maps each socket onto a net::FdWatcher and its timer callback onto one
// net::Timer, so no call blocks and no thread is made (name resolution aside: libcurl's
// threaded resolver). Bodies are bounded; exchanges still running when the transport is
// destroyed are dropped without their callbacks.
//
// The token's copies: libcurl is handed the request's Authorization line itself (a list node of
// ours around the guarded string, not curl_slist_append's copy, nor CURLOPT_XOAUTH2_BEARER's
// two: its own and the header it builds of it). It copies the line only into the request it
// formats (and, over TLS, into its upload buffer), both freed by the time the exchange ends, and
// its allocator wipes what it frees (curl_library.hpp). OpenSSL's record buffers are its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fabric/http.hpp"
#include "net/fd_watcher.hpp"
#include "net/loop.hpp"
#include "net/timer.hpp"

namespace lattice::fabric {

struct CurlLibrary;

struct TransportOptions {
  uint64_t connect_timeout_ms = 2000;
  uint64_t timeout_ms = 5000;         // the whole exchange
  size_t max_body_bytes = 64 * 1024;  // a longer answer fails the exchange
};

class CurlTransport : public HttpTransport {
 public:
  CurlTransport(net::Loop& loop, TransportOptions options);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  void send(HttpRequest request, std::function<void(HttpOutcome)> done) override;

  struct Exchange;  // one request in flight (curl_transport.cpp)

 private:
  void on_socket(int fd, int what);  // CURLMOPT_SOCKETFUNCTION
  void on_timer(long timeout_ms);    // CURLMOPT_TIMERFUNCTION
  void act(int fd, int events);      // curl_multi_socket_action, then harvest
  void harvest();                    // finished exchanges: removed from curl, then completed
  void complete_later(std::unique_ptr<Exchange> exchange);

  net::Loop& loop_;
  TransportOptions options_;
  const CurlLibrary* curl_ = nullptr;  // null when libcurl cannot be loaded:
  std::string unavailable_;            // why, which every exchange then fails with
  void* multi_;                        // CURLM*
  net::Timer timer_;
  net::Timer deferred_timer_;
  std::map<int, std::unique_ptr<net::FdWatcher>> sockets_;
  std::map<Exchange*, std::unique_ptr<Exchange>> running_;
  std::vector<std::unique_ptr<Exchange>> deferred_;  // failed before curl ran them
};

}  // namespace lattice::fabric
