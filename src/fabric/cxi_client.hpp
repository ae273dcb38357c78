// The fabric manager's CXI service API, as the launcher (lattice-api's role) uses it per launch:
//   provision: POST /fabric/cxi/services {vni, allocation_id, nodes} -> {id, svc_id}, then
//              GET /fabric/cxi/services/{id}/auth -> {auth_key}
//   release:   DELETE /fabric/cxi/services/{id}
// Each request is retried with doubling backoff on connection failures, timeouts and 5xx
// answers, a bounded number of times; a 4xx fails at once with the server's own words. Errors
// name the fabric manager and the request; none carries the key.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/result.hpp"
#include "fabric/cxi_json.hpp"
#include "fabric/http.hpp"
#include "secure/secret.hpp"

namespace lattice::fabric {

struct ClientOptions {
  std::string url;            // the fabric manager's base URL, e.g. https://fm.example:8443
  int max_attempts = 4;       // per request, the first included
  uint64_t backoff_ms = 100;  // before the first retry; doubled after each
};

// What a launch's ranks need to open CXI endpoints, and what the launcher needs to give the
// service back.
struct CxiCredentials {
  std::string service_id;  // the fabric manager's id of the service
  uint32_t vni = 0;
  uint32_t svc_id = 0;
  secure::Secret auth_key{1};
};

class CxiClient {
 public:
  // `token`: NUL-terminated (token_file.hpp); the client keeps it only as the header it sends
  // (authorization_header). The transport and waiter outlive the client, and the client
  // outlives its requests.
  CxiClient(HttpTransport& transport, Waiter& waiter, ClientOptions options, secure::Secret token);

  // A service for the launch and its key. If the key cannot be had after the service was
  // made, the service is deleted before `done` hears the error.
  void provision(const ServiceRequest& request, std::function<void(Result<CxiCredentials>)> done);
  void release(const std::string& service_id, std::function<void(Status)> done);
  const std::string& url() const { return options_.url; }

 private:
  // One request with its retries: `done` gets a 2xx answer, or the error to report.
  void exchange(std::string method, std::string path, std::string body, int attempt,
                std::function<void(Result<HttpOutcome>)> done);

  HttpTransport& transport_;
  Waiter& waiter_;
  ClientOptions options_;
  secure::Secret authorization_;  // "Authorization: Bearer TOKEN"
};

}  // namespace lattice::fabric
