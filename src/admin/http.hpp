// The metrics endpoint's HTTP, both halves of one exchange: the agent gathers a client's request
// head (at most kMaxHttpRequestBytes, however the client sends it, every byte checked) and writes
// the whole answer to `GET /metrics`, after which it closes the connection. Pure: the agent moves
// the bytes. HTTP/1.0 and 1.1 only, one request per connection, no body read.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace lattice::admin {

// The most bytes of a request head (request line + headers) the agent holds for one client.
inline constexpr size_t kMaxHttpRequestBytes = 8192;

struct HttpRequestHead {
  std::string method;  // as sent ("GET")
  std::string target;  // as sent ("/metrics?x=1")
};

class HttpRequestBuffer {
 public:
  // A client's bytes, in whatever pieces they come. nullopt while the head is incomplete; once
  // it is complete (an empty line: CRLF CRLF, or bare LF LF as lenient servers accept), the
  // parsed head, or an error whose message says what was wrong (for the 400 body). Beyond
  // kMaxHttpRequestBytes without the end: an error of kind too_large. Given once: later calls
  // return nullopt. A body after the head is ignored.
  std::optional<Result<HttpRequestHead>> add(std::string_view bytes);

 private:
  std::string head_;  // at most kMaxHttpRequestBytes
  bool given_ = false;
};

// The whole response for a request to the metrics endpoint (status line, headers, body), the
// connection then being closed ("Connection: close", Content-Length always set):
//   error -> 400 Bad Request (431 Request Header Fields Too Large when too large), a short
//   text/plain body;
//   method other than GET/HEAD -> 405 with "Allow: GET, HEAD";
//   path (target before '?') other than "/metrics" -> 404;
//   GET /metrics -> 200, Content-Type "text/plain; version=0.0.4; charset=utf-8", body =
//   metrics();
//   HEAD /metrics -> the same headers (Content-Length of the body) but no body.
// `metrics` is called only for a 200. A HEAD request never gets a body, whatever its status.
std::string metrics_http_answer(const Result<HttpRequestHead>& request,
                                const std::function<std::string()>& metrics);

}  // namespace lattice::admin
