// libFuzzer target: the metrics endpoint's HTTP (admin::HttpRequestBuffer and
// admin::metrics_http_answer), whose bytes come from anyone who can reach the port. The head is
// taken once, when its empty line or the limit comes, and the same whatever the pieces; what it
// gives is well-formed; the answer is a whole HTTP/1.1 response whose head holds no byte a
// terminal or a proxy would act on, with an exact Content-Length, and metrics are rendered only
// for a 200.
// Input: one byte, the size of the pieces the client's bytes arrive in (0: all at once); then
// the client's bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "admin/http.hpp"

namespace {

using namespace lattice;
using namespace lattice::admin;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "metrics_http: %s\n", what);
  std::abort();
}

bool printable_ascii(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c >= 0x7f) return false;
  return true;
}

// Whether `bytes`, sent in full, end a head within the limit (or reach the limit without).
bool completes(std::string_view bytes) {
  std::string_view held = bytes.substr(0, kMaxHttpRequestBytes);
  return held.find("\n\n") != std::string_view::npos ||
         held.find("\n\r\n") != std::string_view::npos || bytes.size() >= kMaxHttpRequestBytes;
}

void check_request(const Result<HttpRequestHead>& request) {
  if (!request) {
    require(!request.error().message.empty() && printable_ascii(request.error().message),
            "an error message is printable ASCII");
    return;
  }
  const std::string& method = request->method;
  const std::string& target = request->target;
  require(!method.empty() && method.size() <= 16 && printable_ascii(method) &&
              method.find(' ') == std::string::npos,
          "a method is a short token");
  require(!target.empty() && target[0] == '/' && target.size() <= 2048 && printable_ascii(target) &&
              target.find(' ') == std::string::npos,
          "a target is a visible path");
}

// `rendered`: the metrics' size, had they been asked for.
void check_answer(const Result<HttpRequestHead>& request, const std::string& answer, int renders,
                  size_t rendered) {
  require(answer.rfind("HTTP/1.1 ", 0) == 0, "an answer starts with its status line");
  size_t end = answer.find("\r\n\r\n");
  require(end != std::string::npos, "an answer's head ends with an empty line");
  std::string_view head = std::string_view(answer).substr(0, end + 2);
  std::string_view body = std::string_view(answer).substr(end + 4);
  size_t line_start = 0;
  for (size_t i = 0; i < head.size(); ++i) {
    unsigned char c = head[i];
    require(c == '\r' || c == '\n' || (c >= 0x20 && c < 0x7f), "a control byte in the head");
    if (c == '\r') require(i + 1 < head.size() && head[i + 1] == '\n', "a CR not before LF");
    if (c == '\n') {
      require(i > 0 && head[i - 1] == '\r', "a bare LF in the head");
      line_start = i + 1;
    }
  }
  require(line_start == head.size(), "the head is whole lines");
  const std::string_view length = "\r\nContent-Length: ";
  size_t at = head.find(length);
  require(at != std::string_view::npos, "Content-Length is set");
  require(head.find("\r\nConnection: close\r\n") != std::string_view::npos,
          "the connection closes");
  std::string_view digits = head.substr(at + length.size());
  digits = digits.substr(0, digits.find('\r'));
  bool is_head = request && request->method == "HEAD";
  bool ok = answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0;
  if (is_head) {
    require(body.empty(), "a HEAD request gets no body");
    if (ok) require(digits == std::to_string(rendered), "HEAD's Content-Length is GET's");
  } else {
    require(digits == std::to_string(body.size()), "Content-Length is the body's size");
  }
  require(renders == (ok ? 1 : 0), "metrics are rendered for a 200 only, and once");
  require(
      ok == (request && (request->method == "GET" || is_head) &&
             std::string_view(request->target).substr(0, request->target.find('?')) == "/metrics"),
      "a 200 is for GET or HEAD /metrics");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = data[0];
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

  HttpRequestBuffer buffer;
  std::optional<Result<HttpRequestHead>> request;
  int results = 0;
  size_t consumed = 0;
  for (std::string_view rest = input; !rest.empty();) {
    size_t n = piece == 0 ? rest.size() : std::min(piece, rest.size());
    consumed += n;
    if (auto result = buffer.add(rest.substr(0, n))) {
      require(consumed <= kMaxHttpRequestBytes + n, "more than the limit held before a result");
      request = std::move(result);
      ++results;
    }
    rest.remove_prefix(n);
  }
  require(results <= 1, "one result per client");
  require(results == (completes(input) ? 1 : 0), "a result when, and only when, the head ends");
  if (!request) return 0;
  require(!buffer.add("\r\n\r\n"), "nothing after the result");
  check_request(*request);

  // The pieces change nothing.
  HttpRequestBuffer at_once;
  auto whole = at_once.add(input);
  require(whole && whole->ok() == request->ok(), "the same result at once");
  if (request->ok())
    require((*whole)->method == (*request)->method && (*whole)->target == (*request)->target,
            "the same head at once");
  else
    require(whole->error().message == request->error().message, "the same error at once");

  int renders = 0;
  const std::string metrics = std::string(input.size() % 300, 'm') + "\n";
  std::string answer = metrics_http_answer(*request, [&] {
    ++renders;
    return metrics;
  });
  check_answer(*request, answer, renders, metrics.size());
  return 0;
}
