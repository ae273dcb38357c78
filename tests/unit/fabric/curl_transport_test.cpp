// libcurl on the loop against a small in-process HTTP server (net listeners, loopback, port 0):
// requests arrive as sent (method, path, bearer, JSON body), answers come back with their
// status, and the transport's limits hold: a body over the cap, a refused connection, a server
// that never answers, a transport destroyed mid-exchange. libcurl itself is loaded on first use.
#include "fabric/curl_transport.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../net/net_test_support.hpp"
#include "fabric/curl_library.hpp"
#include "net/listener.hpp"

namespace lattice::fabric {
namespace {

using net::test::run_until;

// Answers each request with `response` once its headers (and Content-Length body) are in;
// keeps what it received. An empty response: never answers.
struct Server {
  std::string response;
  std::vector<std::string> requests;
  std::vector<std::unique_ptr<net::Stream>> clients;
  std::unique_ptr<net::TcpListener> listener;
  explicit Server(net::Loop& loop, std::string answer) : response(std::move(answer)) {
    auto l = net::TcpListener::listen(loop, "127.0.0.1", 0, [this](std::unique_ptr<net::Stream> s) {
      net::Stream* raw = s.get();
      clients.push_back(std::move(s));
      size_t index = requests.size();
      requests.emplace_back();
      raw->start(
          [this, raw, index](std::string_view bytes) {
            std::string& got = requests[index];
            got += bytes;
            auto end = got.find("\r\n\r\n");
            if (end == std::string::npos || response.empty()) return;
            size_t length = 0;
            if (auto cl = got.find("Content-Length: "); cl != std::string::npos)
              length = std::stoul(got.substr(cl + 16));
            if (got.size() >= end + 4 + length) raw->end(response);
          },
          [](const Error&) {});
    });
    REQUIRE(l);
    listener = std::move(l.value());
  }
  std::string url(const std::string& path) const {
    return cat("http://127.0.0.1:", listener->bound().port, path);
  }
};

std::string http(const std::string& status, const std::string& body) {
  return cat("HTTP/1.1 ", status,
             "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
             "\r\nConnection: close\r\n\r\n", body);
}

}  // namespace

TEST_CASE("curl on the loop: a POST with its bearer and body, and the answer") {
  net::Loop loop;
  Server server(loop, http("201 Created", R"({"id":"s1","svc_id":5})"));
  CurlTransport transport(loop, {});
  const char* bearer = "Authorization: Bearer tok-xyz";
  std::optional<HttpOutcome> got;
  transport.send({"POST", server.url("/fabric/cxi/services"), R"({"vni":1})", bearer},
                 [&](HttpOutcome o) { got = std::move(o); });
  CHECK_FALSE(got);
  REQUIRE(run_until(loop, [&] { return got.has_value(); }));
  CHECK(got->transport == HttpOutcome::Transport::ok);
  CHECK(got->status == 201);
  CHECK(got->body == R"({"id":"s1","svc_id":5})");
  REQUIRE(server.requests.size() == 1);
  const std::string& req = server.requests[0];
  CHECK(req.rfind("POST /fabric/cxi/services HTTP/1.1\r\n", 0) == 0);
  CHECK(req.find("Authorization: Bearer tok-xyz\r\n") != std::string::npos);
  CHECK(req.find("Content-Type: application/json\r\n") != std::string::npos);
  CHECK(req.substr(req.size() - 9) == R"({"vni":1})");

  std::optional<HttpOutcome> deleted;
  transport.send({"DELETE", server.url("/fabric/cxi/services/s1"), "", bearer},
                 [&](HttpOutcome o) { deleted = std::move(o); });
  REQUIRE(run_until(loop, [&] { return deleted.has_value(); }));
  CHECK(server.requests.back().rfind("DELETE /fabric/cxi/services/s1 HTTP/1.1\r\n", 0) == 0);
}

TEST_CASE("curl on the loop: a body over the cap fails the exchange") {
  net::Loop loop;
  Server server(loop, http("200 OK", std::string(5000, 'x')));
  CurlTransport transport(loop, {2000, 5000, 4096});
  std::optional<HttpOutcome> got;
  transport.send({"GET", server.url("/big"), "", nullptr},
                 [&](HttpOutcome o) { got = std::move(o); });
  REQUIRE(run_until(loop, [&] { return got.has_value(); }));
  CHECK(got->transport == HttpOutcome::Transport::failed);
  CHECK(got->error.find("longer than 4096") != std::string::npos);
}

TEST_CASE("curl on the loop: refused and silent servers") {
  net::Loop loop;
  std::string refused_url;
  {
    Server gone(loop, "");
    refused_url = gone.url("/x");
  }  // the listener is closed: nothing listens on that port now
  CurlTransport transport(loop, {1000, 300, 4096});
  std::optional<HttpOutcome> refused;
  transport.send({"GET", refused_url, "", nullptr}, [&](HttpOutcome o) { refused = std::move(o); });
  REQUIRE(run_until(loop, [&] { return refused.has_value(); }));
  CHECK(refused->transport == HttpOutcome::Transport::connect_failed);

  Server silent(loop, "");
  std::optional<HttpOutcome> timed_out;
  transport.send({"GET", silent.url("/x"), "", nullptr},
                 [&](HttpOutcome o) { timed_out = std::move(o); });
  REQUIRE(run_until(loop, [&] { return timed_out.has_value(); }));
  CHECK(timed_out->transport == HttpOutcome::Transport::timed_out);
}

TEST_CASE("curl on the loop: a transport destroyed mid-exchange calls nobody back") {
  net::Loop loop;
  Server silent(loop, "");
  bool called = false;
  {
    CurlTransport transport(loop, {});
    transport.send({"GET", silent.url("/x"), "", nullptr}, [&](HttpOutcome) { called = true; });
    run_until(
        loop, [&] { return !silent.requests.empty(); }, 2000);
  }
  run_until(
      loop, [] { return false; }, 200);
  CHECK_FALSE(called);
}

}  // namespace lattice::fabric

namespace lattice::fabric {

TEST_CASE("libcurl is loaded on first use, and a library that cannot be loaded says which") {
  auto lib = curl_library();
  REQUIRE_MESSAGE(lib, lib.error().message);
  CHECK(curl_library().value() == *lib);  // once per process
  CHECK(reinterpret_cast<void*>((*lib)->easy_init) != nullptr);
  auto missing = load_curl_library("libcurl-not-there.so.4");
  REQUIRE(!missing);
  CHECK(missing.error().message.find("cannot load libcurl-not-there.so.4") == 0);
  auto wrong = load_curl_library("libz.so.1");  // loads, but is not libcurl
  REQUIRE(!wrong);
  CHECK(wrong.error().message.find("libz.so.1 lacks curl_global_init") == 0);
}

}  // namespace lattice::fabric
