// libFuzzer target: a launch request as an agent decodes it (agent/launch_spec.hpp): host lists,
// rank layouts and block shorthands, apps, environment, user, CXI key. Any request is refused
// with an error or becomes a spec that keeps every promise launch_spec.hpp makes, and whose
// fence tree the agent builds and walks as a launch does. A relayed one is then judged as a
// certified node below the head judges it (agent/signed_relays.hpp), against an authority whose
// secret key nobody holds: none is ever taken on a signature.
// Input: one byte describing the receiving agent, then rpc frames from a launcher; every
// LaunchProcesses body among them is decoded.
//   bits 0-1: the agent's node id, n0..n3
//   bit 2: the agent runs as root (else as uid 1000); bit 3: it allows root jobs;
//   bit 4: its security.allow_root_job_env is [BASH_ENV, "PYTHON*"]
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "agent/launch_spec.hpp"
#include "agent/signed_relays.hpp"
#include "proc/environment.hpp"
#include "session_input.hpp"

namespace {

using namespace lattice;
using namespace lattice::agent;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "launch_request: a decoded spec breaks its promise: %s\n", what);
  std::abort();
}

void check_spec(const LaunchSpec& spec, const LaunchDefaults& d) {
  require(!spec.launch_id.empty() && spec.launch_id.size() <= kMaxLaunchIdLength &&
              spec.launch_id[0] != '.' && spec.launch_id.find('/') == std::string::npos,
          "launch id path-safe");
  require(spec.world_size >= 1 && static_cast<uint32_t>(spec.world_size) <= d.max_world_size,
          "world size within the limit");
  const int nnodes = spec.nnodes();
  require(nnodes >= 1 && nnodes <= spec.world_size, "one node at least, no more than ranks");
  require(!spec.peers.duplicate(), "node ids unique");
  require(spec.node_index >= 0 && spec.node_index < nnodes && spec.head_node >= 0 &&
              spec.head_node < nnodes,
          "node and head indexes among the peers");
  require(spec.peers[static_cast<size_t>(spec.node_index)].node_id == d.node_id,
          "addressed to this agent");
  require(spec.rank_nodes.size() == static_cast<size_t>(spec.world_size), "a node per rank");
  for (int node : spec.rank_nodes) require(node >= 0 && node < nnodes, "rank nodes in range");
  const size_t local = spec.local_ranks().size();
  require(local >= 1 && local <= d.max_ranks_per_node, "local ranks within the limit");

  require(!spec.apps.empty(), "an app at least");
  int next = 0;
  for (const App& app : spec.apps) {
    require(!app.entrypoint.empty() && app.size >= 1 && app.first_rank == next, "apps contiguous");
    next += app.size;
  }
  require(next == spec.world_size, "apps hold the world");
  for (int rank = 0; rank < spec.world_size; ++rank) {
    int a = spec.app_of(rank);
    require(a >= 0 && static_cast<size_t>(a) < spec.apps.size() &&
                rank >= spec.apps[static_cast<size_t>(a)].first_rank &&
                rank < spec.apps[static_cast<size_t>(a)].first_rank +
                           spec.apps[static_cast<size_t>(a)].size,
            "app_of");
  }

  require(spec.user.uid != UINT32_MAX && spec.user.gid != UINT32_MAX && !spec.user.name.empty(),
          "a user");
  require(d.agent_uid == 0 || spec.user.uid == d.agent_uid, "only the agent's own user");
  require(spec.user.uid != 0 || (d.agent_uid == 0 && d.allow_root_jobs), "root only if allowed");
  const proc::EnvRules rules{spec.user.uid == 0, d.root_env_allowed};
  require(static_cast<bool>(proc::check_request_env(spec.env, rules)), "the launch's env");
  for (const App& app : spec.apps)
    require(static_cast<bool>(proc::check_request_env(app.env, rules)), "an app's env");
  for (const auto& name : spec.env_left_out)  // (LANG, LC_* and TZ are hooks by a '/' value)
    require(!rules.hook_refusal(name, "/").empty(), "only hooks not allowed left out");
  require(spec.env_left_out.empty() || spec.user.uid == 0, "only root jobs lose variables");

  require(spec.input_rank >= -2 && spec.input_rank < spec.world_size, "input rank");
  require(!spec.relayed || (spec.fanout > 0 && !spec.launcher_name.empty()), "relayed");
  if (spec.cxi) require(spec.cxi->auth_key_hex.size() % 2 == 1, "CXI key hex, NUL-terminated");

  // The tree every agent of the launch works out alone, walked as the fence and the relay do.
  const fence::Tree tree = spec.fence_tree();
  for (int node = 0; node < nnodes; ++node) {
    const int parent = tree.parent(node);
    require((parent == -1) == (node == spec.head_node) && parent < nnodes, "a parent");
    for (int child : tree.children(node))
      require(child >= 0 && child < nnodes && tree.parent(child) == node, "children");
    require(tree.in_subtree(spec.head_node, node), "under the head");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  LaunchDefaults defaults;
  defaults.node_id = "n" + std::to_string(data[0] & 3);
  defaults.agent_uid = (data[0] & 4) ? 0 : 1000;
  defaults.allow_root_jobs = (data[0] & 8) != 0;
  if (data[0] & 16) defaults.root_env_allowed = {"BASH_ENV", "PYTHON*"};
  // Small enough that each input is checked in microseconds (the checks walk every rank).
  defaults.max_world_size = 4096;
  std::string_view frames(reinterpret_cast<const char*>(data + 1), size - 1);
  fuzz::deliver_messages(frames, [&](size_t, schema::Envelope::Reader envelope) {
    if (!envelope.getBody().isLaunchProcesses()) return;
    auto request = wire::decode_launch_request(envelope.getBody().getLaunchProcesses());
    if (!request) return;
    auto spec = make_launch_spec(*request, defaults);
    if (!spec) return;
    check_spec(*spec, defaults);
    if (!spec->relayed) return;
    secure::CaPublicKey authority{};
    authority.fill(0x5a);
    auto raw = envelope.getBody().getLaunchProcesses();
    SignedRelays relays;
    auto admitted = relays.admit(raw, *spec, authority, {}, 1800000000);
    require(!admitted || (!raw.hasLauncherSignature() && !spec->allocation_id.empty()),
            "taken below the head only unsigned, inside an allocation");
  });
  return 0;
}
