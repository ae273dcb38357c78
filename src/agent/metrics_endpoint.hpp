// Prometheus scrapes of the agent's metrics over HTTP (metrics.listen in the configuration):
// GET /metrics, one request per connection, answered and closed. It carries counts and no
// secret, so it asks for no key; what a client can make it hold is still bounded: at most
// kMaxClients at once (a further one is closed at once), each client's request head at most
// admin::kMaxHttpRequestBytes and kRequestTimeoutMs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "admin/http.hpp"
#include "base/log_limiter.hpp"
#include "base/result.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/stream.hpp"
#include "net/timer.hpp"

namespace lattice::agent {

class MetricsEndpoint {
 public:
  static constexpr size_t kMaxClients = 16;
  static constexpr uint64_t kRequestTimeoutMs = 5000;
  using MetricsFn = std::function<std::string()>;

  static Result<std::unique_ptr<MetricsEndpoint>> listen(net::Loop& loop, const std::string& host,
                                                         int port, MetricsFn metrics);
  HostPort bound() const { return listener_->bound(); }

 private:
  struct Client {
    explicit Client(net::Loop& loop) : deadline(loop) {}
    std::unique_ptr<net::Stream> stream;
    admin::HttpRequestBuffer request;
    net::Timer deadline;
  };

  MetricsEndpoint(net::Loop& loop, MetricsFn metrics) : loop_(loop), metrics_(std::move(metrics)) {}
  void accept(std::unique_ptr<net::Stream> stream);

  net::Loop& loop_;
  MetricsFn metrics_;
  std::unique_ptr<net::TcpListener> listener_;
  std::map<uint64_t, std::unique_ptr<Client>> clients_;
  uint64_t next_id_ = 1;
  LogLimiter refusals_;
};

}  // namespace lattice::agent
