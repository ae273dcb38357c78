// Certified launchers and relayed requests for the tests of launch signatures (wire) and of
// the agents' admission of relayed requests (agent): an authority and identities in a
// temporary directory, made by the operators' own commands' code.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "rpc/outgoing.hpp"
#include "secure/certificate_files.hpp"

namespace lattice::testing {

inline constexpr uint64_t kNow = 1800000000;

struct Files {
  std::string dir;
  secure::CaPublicKey authority{};
  Files() {
    char tmpl[] = "/tmp/lattice-launch-signature-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    dir = tmpl;
    REQUIRE(secure::generate_authority_files(dir + "/ca.key"));
    authority = secure::load_authority_file(dir + "/ca.key.pub").value();
  }
  ~Files() { std::system(("rm -rf '" + dir + "'").c_str()); }
  secure::OwnIdentity certify(const secure::Identity& who, const std::string& ca = "ca.key") {
    const std::string path = dir + "/" + who.name + "." + ca + ".identity";
    REQUIRE(secure::certify_identity(dir + "/" + ca, who, 30, kNow, path));
    auto own = secure::load_identity_file(path);
    REQUIRE_MESSAGE(own, own.error().message);
    return std::move(*own);
  }
};

// A relayed request of three nodes, launched by `launcher`, addressed to node 0 (docs/protocol.md's
// launch vectors are this request without CXI credentials).
inline rpc::Outgoing request(const std::string& launcher = "ops", bool cxi = true) {
  rpc::Outgoing m;
  auto req = m.body().initLaunchProcesses();
  req.setLaunchId("L1");
  req.setEntrypoint("/bin/true");
  req.setWorldSize(3);
  req.setTasksPerNode(1);
  auto peers = req.initPeers(3);
  for (unsigned i = 0; i < 3; ++i) {
    peers[i].setNodeId("n" + std::to_string(i + 1));
    peers[i].setHost("127.0.0." + std::to_string(i + 1));
    peers[i].setPort(7400);
  }
  req.setRelayed(true);
  req.setFanout(2);
  req.setLauncherName(launcher);
  auto user = req.initUser();
  user.setUid(1000);
  user.setGid(1000);
  user.setName("alice");
  if (cxi) req.initCxiCredentials().setAuthKey(kj::StringPtr("not a real key").asBytes());
  return m;
}

inline schema::LaunchProcessesRequest::Builder body(rpc::Outgoing& m) {
  return m.body().getLaunchProcesses();
}

}  // namespace lattice::testing
