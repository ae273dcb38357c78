// The admin socket's protocol and what it shows: one request line in ("status", "status
// LAUNCH_ID", "status-json [LAUNCH_ID]", "allocations", "metrics", "end-allocation ID", "drain
// [REASON]", "undrain"), text out. Pure: the agent supplies its state through AgentControl and
// moves the bytes; this decides what an operator reads when a job hangs. What ranks and clients
// sent (a rank's last PMI command, the request) is shown through printable(): an operator's
// terminal acts on no byte of theirs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lattice::admin {

struct RankRow {
  int rank = 0;
  int pid = 0;
  std::string pmi_state;
  std::string last_command;
  uint64_t idle_ms = 0;
  uint64_t fence_epoch = 0;  // fences this rank has entered
};

// The latest fence's phases on this node, microseconds since the launch request arrived (0: not
// reached yet).
struct FenceRow {
  uint64_t epoch = 0;
  uint64_t entered_us = 0, reduced_us = 0, store_us = 0, released_us = 0;
};

struct LaunchRow {
  std::string launch_id;
  int node_index = 0;
  int nnodes = 1;
  int world_size = 0;
  uint64_t fence_epoch = 0;            // highest fence every local rank has entered
  std::vector<int> fence_waiting_for;  // ranks fence_epoch + 1 still waits for (some are in it)
  std::vector<int> children_pending;   // child node indexes whose fence part has not arrived
  std::vector<RankRow> ranks;
  uint64_t age_ms = 0;
  std::vector<FenceRow> last_fence;  // empty, or the latest fence seen here
};

// An allocation this node holds.
struct AllocationRow {
  std::string id;
  std::string user;
  uint32_t uid = 0;
  int node_index = 0;
  int nnodes = 1;
  uint64_t remaining_ms = 0;  // 0: no time limit
  bool ending = false;
  size_t launches = 0;  // its launches running here
  std::string limits;   // how its CPU and memory limits are enforced here
};

// What an operator's drain reason may be (bytes); longer is cut.
inline constexpr size_t kMaxDrainReason = 256;

struct AgentStatus {
  std::string version;
  std::string node_id;
  std::string listen;
  uint64_t uptime_ms = 0;
  std::vector<LaunchRow> launches;
  std::vector<AllocationRow> allocations;
  uint64_t messages_sent = 0, messages_received = 0;  // on every link since start
  size_t peer_links = 0;       // peer agents with a link (up, coming up, or awaited)
  size_t peer_links_held = 0;  // of them, held by a live launch (heartbeated)
  size_t open_links = 0;       // sealed links open (launchers and peers, whoever made them)
  std::string draining;        // the drain's reason; empty: not draining
};

class AgentControl {
 public:
  virtual ~AgentControl() = default;
  virtual AgentStatus status() = 0;
  // An operator ends allocation `id` here ("end-allocation ID"); an error says why not.
  virtual std::string end_allocation(const std::string& id) = 0;
  // An operator drains the node ("drain REASON": new launches and allocations refused with the
  // reason, running ones go on) or ends the drain ("undrain": `reason` empty).
  virtual void drain(const std::string& reason) = 0;
  // The agent's metrics in the Prometheus text format (admin/metrics.hpp), for "metrics".
  virtual std::string metrics() = 0;
};

std::string handle_request(std::string_view line, AgentControl& control);
std::string render_status(const AgentStatus& status, const std::string& only_launch = "");
std::string render_allocations(const AgentStatus& status);
// The same state as one JSON object ("status-json [LAUNCH_ID]", `lattice admin status --json`),
// for programs: durations in milliseconds, every field named as in these structs; what ranks
// sent is a JSON string (control bytes and non-ASCII escaped, invalid UTF-8 replaced).
std::string render_status_json(const AgentStatus& status, const std::string& only_launch = "");
// Pieces of the rendering, usable on their own.
std::string format_duration(uint64_t ms);  // "4.2s", "3m07s", "2h05m", "3d01h"

}  // namespace lattice::admin
