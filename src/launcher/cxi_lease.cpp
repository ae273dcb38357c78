#include "launcher/cxi_lease.hpp"

#include <cstdio>

#include "base/log.hpp"
#include "base/strings.hpp"

namespace lattice::launcher {

CxiLease::CxiLease(net::Loop& loop, const Clock& clock, FabricSettings settings,
                   secure::Secret token)
    : clock_(clock),
      settings_(std::move(settings)),
      transport_(loop, settings_.transport),
      waiter_(loop),
      client_(transport_, waiter_, settings_.client, std::move(token)) {}

void CxiLease::provision(const std::string& allocation_id, std::vector<std::string> nodes,
                         std::function<void(Status)> ready) {
  provisioning_ = true;
  uint64_t started = clock_.now_ns();
  LAT_LOG(info, "fabric", "asking ", client_.url(), " for a CXI service on VNI ", settings_.vni,
          " for ", nodes.size(), " nodes", log_fields({{"alloc", allocation_id}}));
  client_.provision(fabric::ServiceRequest{settings_.vni, allocation_id, std::move(nodes)},
                    [this, started, alloc = allocation_id,
                     ready = std::move(ready)](Result<fabric::CxiCredentials> got) {
                      provisioning_ = false;
                      provision_ms_ = static_cast<double>(clock_.now_ns() - started) / 1e6;
                      if (got) {
                        credentials_ = std::move(got.value());
                        LAT_LOG(info, "fabric", "CXI service ", credentials_->service_id,
                                " (svc_id ", credentials_->svc_id, ") in ", provision_ms_, " ms",
                                log_fields({{"alloc", alloc}}));
                      }
                      // A release that came while we waited: give it back now, and launch nothing.
                      if (released_) return give_back();
                      ready(got ? Status{} : Status(got.error()));
                    });
}

void CxiLease::release(std::function<void()> done) {
  if (released_) return done();
  released_ = true;
  on_released_ = std::move(done);
  if (!provisioning_) give_back();
}

void CxiLease::give_back() {
  auto done = std::move(on_released_);
  if (!credentials_) return done();
  std::string id = credentials_->service_id;
  credentials_.reset();  // the key is wiped here: nothing more will be sent with it
  client_.release(id, [this, id, done = std::move(done)](Status deleted) {
    if (deleted)
      LAT_LOG(info, "fabric", "CXI service ", id, " deleted");
    else
      std::fprintf(stderr,
                   "lattice: could not delete CXI service %s at the fabric manager %s (%s); "
                   "delete it by hand\n",
                   id.c_str(), client_.url().c_str(), deleted.error().message.c_str());
    done();
  });
}

}  // namespace lattice::launcher
