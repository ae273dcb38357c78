// Server in a build without libpmix (meson -Dpmix=disabled, or libpmix-dev missing): every
// entry point says so, and nothing else in the agent needs to know.
#include "pmix/server.hpp"

namespace lattice::pmix {

struct Server::Impl {};

Result<std::unique_ptr<Server>> Server::start(const ServerOptions&, std::function<void()>) {
  return make_error(
      "PMIx (--pmi pmix) is not available: this agent was built without libpmix "
      "(meson -Dpmix=disabled, or libpmix-dev missing)");
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;
void Server::register_job(const JobLayout&, uint32_t, uint32_t, NamespaceEvents&,
                          std::function<void(Status)> done) {
  done(make_error("no PMIx in this build"));
}
Result<std::vector<std::string>> Server::client_environment(const std::string&, int) {
  return make_error("no PMIx in this build");
}
void Server::deregister_job(const std::string&) {}
void Server::drain() {}
void Server::answer_fence(const FenceCall&, bool, std::string) {}
void Server::answer_modex(const RankCall&, bool, std::string) {}
void Server::release(const RankCall&) {}
void Server::local_modex(const std::string&, int, std::function<void(Result<std::string>)> done) {
  done(make_error("no PMIx in this build"));
}

}  // namespace lattice::pmix
