#include "agent/metrics_endpoint.hpp"

#include "base/log.hpp"

namespace lattice::agent {

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::listen(net::Loop& loop,
                                                                 const std::string& host, int port,
                                                                 MetricsFn metrics) {
  std::unique_ptr<MetricsEndpoint> endpoint(new MetricsEndpoint(loop, std::move(metrics)));
  MetricsEndpoint* self = endpoint.get();
  auto listener = net::TcpListener::listen(
      loop, host, port, [self](std::unique_ptr<net::Stream> s) { self->accept(std::move(s)); });
  if (!listener) return listener.error();
  endpoint->listener_ = std::move(listener.value());
  return endpoint;
}

void MetricsEndpoint::accept(std::unique_ptr<net::Stream> stream) {
  if (clients_.size() >= kMaxClients) {
    LAT_LOG_LIMITED(refusals_, warn, "metrics", "full", "refusing a metrics client from ",
                    stream->peer(), ": ", kMaxClients, " are being answered",
                    log_fields({{"peer", stream->peer()}}));
    return;  // dropping the stream closes it
  }
  uint64_t id = next_id_++;
  auto client = std::make_unique<Client>(loop_);
  Client& c = *client;
  c.stream = std::move(stream);
  clients_[id] = std::move(client);
  c.deadline.start(kRequestTimeoutMs, 0, [this, id] { clients_.erase(id); });
  c.stream->start(
      [this, &c](std::string_view bytes) {
        auto request = c.request.add(bytes);
        // The deadline still runs: a client that does not read the answer goes with it.
        if (request) c.stream->end(admin::metrics_http_answer(*request, metrics_));
      },
      [this, id](const Error&) { clients_.erase(id); });
}

}  // namespace lattice::agent
