// A launch's CXI service, leased from the fabric manager: provisioned before any rank starts
// (overlapping the agents' connections and handshakes) and given back when the launch ends,
// however it ends. A failed give-back is reported with the service id (never the key) so an
// operator can delete it by hand.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "fabric/curl_transport.hpp"
#include "fabric/cxi_client.hpp"
#include "fabric/loop_waiter.hpp"
#include "net/loop.hpp"

namespace lattice::launcher {

struct FabricSettings {
  fabric::ClientOptions client;
  fabric::TransportOptions transport;
  uint32_t vni = 0;
};

class CxiLease {
 public:
  CxiLease(net::Loop& loop, const Clock& clock, FabricSettings settings, secure::Secret token);

  // Asks for the launch's service once; `ready` hears the outcome (the error names the fabric
  // manager and what it said).
  void provision(const std::string& allocation_id, std::vector<std::string> nodes,
                 std::function<void(Status)> ready);
  // The credentials while held (null before, after a failure and once released).
  const fabric::CxiCredentials* credentials() const {
    return credentials_ ? &*credentials_ : nullptr;
  }
  double provision_ms() const { return provision_ms_; }  // -1 until provisioned
  // Gives the service back, first waiting for a provisioning still in flight; `done` runs once
  // either way. Later calls only run their `done`.
  void release(std::function<void()> done);

 private:
  void give_back();

  const Clock& clock_;
  FabricSettings settings_;
  fabric::CurlTransport transport_;
  fabric::LoopWaiter waiter_;
  fabric::CxiClient client_;
  std::optional<fabric::CxiCredentials> credentials_;
  bool provisioning_ = false;
  bool released_ = false;
  std::function<void()> on_released_;  // release() waiting for the provisioning
  double provision_ms_ = -1;
};

}  // namespace lattice::launcher
