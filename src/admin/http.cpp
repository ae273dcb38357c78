// The metrics endpoint's request head and answer. Anyone who can reach the port sends these
// bytes: nothing is interpreted that the answer does not need, and no byte of theirs is quoted.
#include "admin/http.hpp"

#include <algorithm>

#include "base/strings.hpp"

namespace lattice::admin {

namespace {

constexpr size_t kMaxMethodBytes = 16;
constexpr size_t kMaxTargetBytes = 2048;

bool visible(unsigned char c) { return c > 0x20 && c < 0x7f; }

// A token character (RFC 9110) that is not a lower-case letter: methods are case-sensitive, and
// every one registered is upper case.
bool method_char(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

template <class Pred>
bool all(std::string_view s, Pred pred) {
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return pred(static_cast<unsigned char>(c)); });
}

Result<HttpRequestHead> parse_request_line(std::string_view line) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos)
    return make_error("the request line is not METHOD TARGET HTTP-VERSION");
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || method.size() > kMaxMethodBytes || !all(method, method_char))
    return make_error(cat("the method is not 1 to ", kMaxMethodBytes, " upper-case token bytes"));
  if (target.empty() || target[0] != '/') return make_error("the target does not start with '/'");
  if (target.size() > kMaxTargetBytes)
    return make_error(cat("the target is longer than ", kMaxTargetBytes, " bytes"));
  if (!all(target, visible)) return make_error("the target holds a byte that is not visible ASCII");
  if (version != "HTTP/1.1" && version != "HTTP/1.0")
    return make_error("the version is not HTTP/1.0 or HTTP/1.1");
  return HttpRequestHead{std::string(method), std::string(target)};
}

// Headers are not used, only checked: a malformed one means the client (or something between)
// does not speak HTTP as we read it, and guessing where its request ends is how smuggling starts.
Status check_header(std::string_view line) {
  if (line[0] == ' ' || line[0] == '\t') return make_error("a header line is folded (obsolete)");
  size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0 ||
      line.substr(0, colon).find_first_of(" \t") != std::string_view::npos)
    return make_error("a header line is not NAME: VALUE");
  return {};
}

// `head`: the lines before the empty one, each ended by LF (the last one by nothing), maybe
// with a CR before it.
Result<HttpRequestHead> parse_head(std::string_view head) {
  std::optional<Result<HttpRequestHead>> request;
  for (int number = 1;; ++number) {
    size_t eol = std::min(head.find('\n'), head.size());
    std::string_view line = head.substr(0, eol);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!all(line, [](unsigned char c) { return c == '\t' || (c >= 0x20 && c < 0x7f); }))
      return make_error(cat("line ", number, " holds a control byte or one beyond ASCII"));
    if (!request) {
      request = parse_request_line(line);
      if (!*request) return *request;
    } else if (Status header = check_header(line); !header) {
      return header.error();
    }
    if (eol == head.size()) return std::move(*request);
    head.remove_prefix(eol + 1);
  }
}

std::string response(std::string_view status, std::string_view content_type,
                     std::string_view more_headers, const std::string& body, bool with_body) {
  return cat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type,
             "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n", more_headers, "\r\n",
             with_body ? std::string_view(body) : std::string_view());
}

constexpr std::string_view kText = "text/plain; charset=utf-8";

}  // namespace

std::optional<Result<HttpRequestHead>> HttpRequestBuffer::add(std::string_view bytes) {
  if (given_) return std::nullopt;
  size_t before = head_.size();
  head_.append(bytes.substr(0, kMaxHttpRequestBytes - before));
  // The end may straddle the pieces: look from two bytes back ("\n\r" + "\n").
  size_t from = before < 2 ? 0 : before - 2;
  size_t end = std::min(head_.find("\n\n", from), head_.find("\n\r\n", from));
  if (end == std::string::npos && head_.size() < kMaxHttpRequestBytes) return std::nullopt;
  given_ = true;
  std::string head = std::move(head_);
  head_.clear();
  if (end == std::string::npos)
    return Result<HttpRequestHead>(
        make_error(cat("the request head is larger than ", kMaxHttpRequestBytes, " bytes"),
                   ErrorKind::too_large));
  return parse_head(std::string_view(head).substr(0, end));
}

std::string metrics_http_answer(const Result<HttpRequestHead>& request,
                                const std::function<std::string()>& metrics) {
  if (!request) {
    bool too_large = request.error().kind == ErrorKind::too_large;
    return response(too_large ? "431 Request Header Fields Too Large" : "400 Bad Request", kText,
                    "", cat("bad request: ", printable(request.error().message), "\n"), true);
  }
  bool head = request->method == "HEAD";
  if (!head && request->method != "GET")
    return response("405 Method Not Allowed", kText, "Allow: GET, HEAD\r\n",
                    "only GET and HEAD are served here\n", true);
  std::string_view path = request->target;
  if (path.substr(0, path.find('?')) != "/metrics")
    return response("404 Not Found", kText, "", "not found: the metrics are at /metrics\n", !head);
  return response("200 OK", "text/plain; version=0.0.4; charset=utf-8", "", metrics(), !head);
}

}  // namespace lattice::admin
