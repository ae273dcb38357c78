// What the fabric client needs from the world, as two small interfaces: an HTTP exchange and a
// wait. Production runs both on the launcher's libuv loop (curl_transport, loop_waiter); the
// unit tests script them, so retries, timeouts and bad answers are tested without sockets.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace lattice::fabric {

struct HttpRequest {
  std::string method;  // "GET", "POST", "DELETE"
  std::string url;
  std::string body;  // JSON for POST; empty otherwise
  // "Authorization: Bearer TOKEN", NUL-terminated, in guarded memory (token_file.hpp), valid
  // until `done` runs. The transport hands libcurl this very string, which it copies only into
  // the request it formats (curl_transport.hpp).
  const char* authorization = nullptr;
};

// How an exchange ended. `transport` failures never reached an HTTP status: a refused or
// unreachable connection and a timeout may be retried; anything else (a bad URL, a reply too
// large) may not.
struct HttpOutcome {
  enum class Transport { ok, connect_failed, timed_out, failed };
  Transport transport = Transport::ok;
  std::string error;  // for transport != ok: libcurl's reason
  long status = 0;    // the HTTP status, when transport == ok
  std::string body;   // the reply's body (bounded by the transport)
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Starts the exchange; `done` runs later, on the loop, never from inside this call.
  virtual void send(HttpRequest request, std::function<void(HttpOutcome)> done) = 0;
};

class Waiter {
 public:
  virtual ~Waiter() = default;
  // Runs `fn` after `ms` milliseconds, on the loop.
  virtual void after(uint64_t ms, std::function<void()> fn) = 0;
};

}  // namespace lattice::fabric
