#include "fabric/cxi_client.hpp"

#include <memory>

#include "base/strings.hpp"
#include "base/wipe.hpp"
#include "fabric/token_file.hpp"

namespace lattice::fabric {
namespace {

constexpr const char* kServices = "/fabric/cxi/services";

bool retryable(const HttpOutcome& outcome) {
  using T = HttpOutcome::Transport;
  if (outcome.transport == T::connect_failed || outcome.transport == T::timed_out) return true;
  return outcome.transport == T::ok && outcome.status >= 500;
}

}  // namespace

CxiClient::CxiClient(HttpTransport& transport, Waiter& waiter, ClientOptions options,
                     secure::Secret token)
    : transport_(transport),
      waiter_(waiter),
      options_(std::move(options)),
      authorization_(authorization_header(token)) {
  while (!options_.url.empty() && options_.url.back() == '/') options_.url.pop_back();
  if (options_.max_attempts < 1) options_.max_attempts = 1;
}

void CxiClient::exchange(std::string method, std::string path, std::string body, int attempt,
                         std::function<void(Result<HttpOutcome>)> done) {
  HttpRequest request{method, options_.url + path, body,
                      reinterpret_cast<const char*>(authorization_.data())};
  transport_.send(std::move(request), [this, method, path, body, attempt,
                                       done = std::move(done)](HttpOutcome outcome) mutable {
    using T = HttpOutcome::Transport;
    if (outcome.transport == T::ok && outcome.status >= 200 && outcome.status < 300)
      return done(std::move(outcome));
    auto what = cat("fabric manager ", options_.url, ": ", method, ' ', path, ": ");
    if (retryable(outcome) && attempt < options_.max_attempts) {
      uint64_t wait = options_.backoff_ms << (attempt - 1);
      return waiter_.after(wait, [this, method = std::move(method), path = std::move(path),
                                  body = std::move(body), attempt,
                                  done = std::move(done)]() mutable {
        exchange(std::move(method), std::move(path), std::move(body), attempt + 1, std::move(done));
      });
    }
    std::string tries = attempt > 1 ? cat(" (", attempt, " attempts)") : "";
    if (outcome.transport != T::ok) return done(make_error(cat(what, outcome.error, tries)));
    std::string said = error_text(outcome.body);
    wipe(outcome.body);
    done(make_error(cat(what, "HTTP ", outcome.status, said.empty() ? "" : ": ", said, tries)));
  });
}

void CxiClient::provision(const ServiceRequest& request,
                          std::function<void(Result<CxiCredentials>)> done) {
  uint32_t vni = request.vni;
  exchange("POST", kServices, encode_service_request(request), 1,
           [this, vni, done = std::move(done)](Result<HttpOutcome> created) mutable {
             if (!created) return done(created.error());
             auto service = decode_service_created(created->body);
             if (!service)
               return done(make_error(cat("fabric manager ", options_.url, ": POST ", kServices,
                                          ": ", service.error().message)));
             std::string id = service->id;
             uint32_t svc_id = service->svc_id;
             exchange(
                 "GET", cat(kServices, '/', id, "/auth"), "", 1,
                 [this, id, vni, svc_id, done = std::move(done)](Result<HttpOutcome> auth) mutable {
                   Result<secure::Secret> key =
                       auth ? decode_auth_key(auth->body) : Result<secure::Secret>(auth.error());
                   if (auth) wipe(auth->body);
                   if (key) return done(CxiCredentials{id, vni, svc_id, std::move(key.value())});
                   std::string why = auth ? cat("fabric manager ", options_.url, ": GET ",
                                                kServices, '/', id, "/auth: ", key.error().message)
                                          : key.error().message;
                   // No key, no use for the service: give it back, then report.
                   release(id, [why, done = std::move(done)](Status) { done(make_error(why)); });
                 });
           });
}

void CxiClient::release(const std::string& service_id, std::function<void(Status)> done) {
  exchange("DELETE", cat(kServices, '/', service_id), "", 1,
           [done = std::move(done)](Result<HttpOutcome> deleted) {
             done(deleted ? Status{} : Status(deleted.error()));
           });
}

}  // namespace lattice::fabric
