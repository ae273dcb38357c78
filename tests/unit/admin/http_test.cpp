// The metrics endpoint's HTTP: the request head is taken once, in whatever pieces it comes and
// bounded; anything that is not a plain HTTP/1.x head is refused without quoting the client's
// bytes; the answer's status, headers and Content-Length are exact, and metrics are rendered only
// for the one request that gets them.
#include "admin/http.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>

using namespace lattice;
using namespace std::literals;
using namespace lattice::admin;

namespace {

// The result of `bytes` sent at once (which must complete the head).
Result<HttpRequestHead> parse(std::string_view bytes) {
  HttpRequestBuffer buffer;
  auto result = buffer.add(bytes);
  REQUIRE(result);
  return std::move(*result);
}

// Printable ASCII, and line ends where `lines`.
bool printable_ascii(const std::string& s, bool lines = false) {
  for (unsigned char c : s)
    if ((c < 0x20 || c >= 0x7f) && !(lines && (c == '\r' || c == '\n'))) return false;
  return true;
}

struct Response {
  std::string status_line;
  std::string headers;  // each line ended by CRLF
  std::string body;
};

Response split(const std::string& answer) {
  Response r;
  size_t eol = answer.find("\r\n");
  size_t end = answer.find("\r\n\r\n");
  REQUIRE(end != std::string::npos);
  r.status_line = answer.substr(0, eol);
  r.headers = answer.substr(eol + 2, end - eol);
  r.body = answer.substr(end + 4);
  return r;
}

bool has(const std::string& s, std::string_view needle) {
  return s.find(needle) != std::string::npos;
}

// The answer to `bytes`, with how many times the metrics were rendered.
std::string answer(std::string_view bytes, int& renders) {
  return metrics_http_answer(parse(bytes), [&] {
    ++renders;
    return std::string("lattice_up 1\n");
  });
}

}  // namespace

TEST_CASE("a request head comes in any pieces, byte by byte too, and is given once") {
  const std::string request =
      "GET /metrics?x=1 HTTP/1.1\r\nHost: node1:9400\r\nAccept: */*\r\nX-Empty:\r\n\r\n";
  HttpRequestBuffer buffer;
  for (size_t i = 0; i + 1 < request.size(); ++i) CHECK_FALSE(buffer.add(request.substr(i, 1)));
  CHECK_FALSE(buffer.add(""));
  auto result = buffer.add(request.substr(request.size() - 1));
  REQUIRE(result);
  REQUIRE(*result);
  CHECK((*result)->method == "GET");
  CHECK((*result)->target == "/metrics?x=1");
  CHECK_FALSE(buffer.add("GET /metrics HTTP/1.1\r\n\r\n"));  // one request per connection
  CHECK_FALSE(buffer.add(""));
}

TEST_CASE("bare LF ends lines as lenient servers accept, and a body is not read") {
  auto lf = parse("HEAD /metrics HTTP/1.0\nHost: a\n\n");
  REQUIRE(lf);
  CHECK(lf->method == "HEAD");
  CHECK(lf->target == "/metrics");
  CHECK(parse("GET / HTTP/1.1\nHost: a\r\n\n"));  // mixed
  CHECK(parse("GET / HTTP/1.1\r\n\n"));
  CHECK(parse("GET / HTTP/1.1\n\r\n"));

  HttpRequestBuffer with_body;
  auto result =
      with_body.add("POST /metrics HTTP/1.1\r\nContent-Length: 7\r\n\r\n\x01\x02\0body"sv);
  REQUIRE(result);
  REQUIRE(*result);
  CHECK((*result)->method == "POST");
  CHECK_FALSE(with_body.add("more body"));
}

TEST_CASE("a head that does not end within the limit is too large") {
  const std::string line = "GET /metrics HTTP/1.1\r\n";
  // Exactly at the limit, its empty line included: taken.
  std::string filler(kMaxHttpRequestBytes - line.size() - 2 - 4, 'a');
  std::string at_limit = line + "X:" + filler + "\r\n\r\n";
  REQUIRE(at_limit.size() == kMaxHttpRequestBytes);
  CHECK(parse(at_limit));
  CHECK(parse(at_limit + "body beyond the limit"));

  // One byte more: the end lies beyond what the agent holds.
  std::string over = line + "X:a" + filler + "\r\n\r\n";
  auto too_large = parse(over);
  REQUIRE_FALSE(too_large);
  CHECK(has(too_large.error().message, "larger than 8192 bytes"));

  // Without an end, sent slowly: given as soon as the limit is reached, never more held.
  HttpRequestBuffer slow;
  std::string piece(1000, 'x');
  size_t sent = 0;
  std::optional<Result<HttpRequestHead>> result;
  while (!(result = slow.add(piece))) sent += piece.size();
  CHECK(sent < kMaxHttpRequestBytes);
  CHECK(sent + piece.size() >= kMaxHttpRequestBytes);
  REQUIRE_FALSE(*result);
  CHECK_FALSE(slow.add("\r\n\r\n"));

  HttpRequestBuffer one_short;
  CHECK_FALSE(one_short.add(std::string(kMaxHttpRequestBytes - 1, 'y')));
  auto last = one_short.add("y");
  REQUIRE(last);
  CHECK_FALSE(*last);

  CHECK_FALSE(parse(std::string(10 * kMaxHttpRequestBytes, 'z')));
}

TEST_CASE("a bad request line is refused, its bytes not quoted") {
  const char* const bad[] = {
      "GET /metrics\r\n\r\n",  // no version (HTTP/0.9)
      "GET /metrics HTTP/2.0\r\n\r\n",
      "GET /metrics HTTP/1.1 \r\n\r\n",  // trailing space
      "GET /metrics http/1.1\r\n\r\n",
      "get /metrics HTTP/1.1\r\n\r\n",  // methods are case-sensitive
      "GEt /metrics HTTP/1.1\r\n\r\n",
      "METHODLONGERTHAN16 / HTTP/1.1\r\n\r\n",
      " GET /metrics HTTP/1.1\r\n\r\n",  // empty method
      "GET  /metrics HTTP/1.1\r\n\r\n",  // empty target
      "GET metrics HTTP/1.1\r\n\r\n",
      "GET http://node1/metrics HTTP/1.1\r\n\r\n",
      "GET * HTTP/1.1\r\n\r\n",
      "GET /met\x7frics HTTP/1.1\r\n\r\n",
      "GET /m\xc3\xa9trics HTTP/1.1\r\n\r\n",
      "GET /metrics\tHTTP/1.1\r\n\r\n",
      "GET /\x1b[2J HTTP/1.1\r\n\r\n",
      "GET /metrics HTTP/1.1\r\r\n\r\n",  // a CR not ending the line
      "\r\nGET /metrics HTTP/1.1\r\n\r\n",
      "\r\n\r\n",
      "\n\n",
  };
  for (const char* request : bad) {
    CAPTURE(request);
    auto result = parse(request);
    REQUIRE_FALSE(result);
    CHECK(printable_ascii(result.error().message));
    CHECK_FALSE(has(result.error().message, "metrics"));
  }
  std::string with_nul("GET /metrics\0 HTTP/1.1\r\n\r\n", 26);
  auto nul = parse(with_nul);
  REQUIRE_FALSE(nul);
  CHECK(has(nul.error().message, "control byte"));
  CHECK_FALSE(parse("GET /" + std::string(2048, 'a') + " HTTP/1.1\r\n\r\n"));
  CHECK(parse("GET /" + std::string(2047, 'a') + " HTTP/1.1\r\n\r\n"));
  CHECK(parse("M-SEARCH16CHARS_ / HTTP/1.0\r\n\r\n"));
}

TEST_CASE("header lines are checked though not interpreted") {
  const char* const bad[] = {
      "GET /metrics HTTP/1.1\r\nHost a\r\n\r\n",          // no colon
      "GET /metrics HTTP/1.1\r\n: a\r\n\r\n",             // no name
      "GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n",        // space before the colon
      "GET /metrics HTTP/1.1\r\nHost: a\r\n  b\r\n\r\n",  // obsolete folding
      "GET /metrics HTTP/1.1\r\nHost: a\r\n\tb\r\n\r\n",
      "GET /metrics HTTP/1.1\r\nHost: a\x1b]0;x\x07\r\n\r\n",  // control bytes
      "GET /metrics HTTP/1.1\r\nHost: a\rb\r\n\r\n",           // a bare CR
      "GET /metrics HTTP/1.1\r\nHost: \xff\r\n\r\n",           // beyond ASCII
  };
  for (const char* request : bad) {
    CAPTURE(request);
    auto result = parse(request);
    REQUIRE_FALSE(result);
    CHECK(printable_ascii(result.error().message));
  }
  CHECK(parse("GET /metrics HTTP/1.1\r\nUser-Agent: Prometheus/2.45.0\r\nX: a\tb \r\n\r\n"));
}

TEST_CASE("GET /metrics is answered 200 with the metrics, HEAD with their length only") {
  int renders = 0;
  Response get = split(answer("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", renders));
  CHECK(renders == 1);
  CHECK(get.status_line == "HTTP/1.1 200 OK");
  CHECK(has(get.headers, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  CHECK(has(get.headers, "Content-Length: 13\r\n"));
  CHECK(has(get.headers, "Connection: close\r\n"));
  CHECK(get.body == "lattice_up 1\n");

  Response head = split(answer("HEAD /metrics HTTP/1.0\r\n\r\n", renders));
  CHECK(renders == 2);
  CHECK(head.status_line == "HTTP/1.1 200 OK");
  CHECK(head.headers == get.headers);
  CHECK(head.body.empty());
}

TEST_CASE("other requests get their status and a short body, and no metrics are rendered") {
  int renders = 0;
  auto check = [&](std::string_view request, std::string_view status_line, bool body) {
    CAPTURE(request);
    Response r = split(answer(request, renders));
    CHECK(r.status_line == status_line);
    CHECK(has(r.headers, "Content-Type: text/plain; charset=utf-8\r\n"));
    CHECK(has(r.headers, "Connection: close\r\n"));
    CHECK(printable_ascii(r.headers, true));
    CHECK(body == !r.body.empty());
    if (body) CHECK(has(r.headers, "Content-Length: " + std::to_string(r.body.size()) + "\r\n"));
    return r;
  };
  Response post = check("POST /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 405 Method Not Allowed", true);
  CHECK(has(post.headers, "Allow: GET, HEAD\r\n"));
  check("OPTIONS * HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request", true);  // not a path
  check("GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found", true);
  check("GET /metrics/ HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found", true);
  check("GET /metricsx?/metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found", true);
  Response head_404 = check("HEAD /other HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found", false);
  CHECK_FALSE(has(head_404.headers, "Content-Length: 0\r\n"));  // the length of the GET's body
  Response bad = check("GET /metrics HTTP/9.9\r\n\r\n", "HTTP/1.1 400 Bad Request", true);
  CHECK(bad.body == "bad request: the version is not HTTP/1.0 or HTTP/1.1\n");
  check(std::string(kMaxHttpRequestBytes, 'x'), "HTTP/1.1 431 Request Header Fields Too Large",
        true);
  CHECK(renders == 0);

  // An error made elsewhere, even one with control bytes, is answered 400 and made printable.
  std::string odd = metrics_http_answer(make_error("odd\x1b[2J"), [&] {
    ++renders;
    return std::string();
  });
  CHECK(split(odd).status_line == "HTTP/1.1 400 Bad Request");
  CHECK(split(odd).body == "bad request: odd\\x1b[2J\n");
  CHECK(renders == 0);
}
