// The agent's side of the schema: every conversion between its structs and Cap'n Proto
// messages, in one place (the launch request's own decoder, with its checks, is launch_spec).
// Readers are valid only during the callback that received them: decoders copy out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/launch.hpp"
#include "agent/tree_fence.hpp"
#include "lattice.capnp.h"
#include "proc/exit_status.hpp"
#include "rpc/outgoing.hpp"

namespace lattice::agent::wire {

// An error when the packed entries are malformed (fence/kv_pack.hpp).
Result<FenceMessage> decode_fence_up(schema::PmiFence::Reader m);
Result<FenceMessage> decode_fence_down(schema::PmiFenceComplete::Reader m);
// A chunk of `launch_id`'s fence from node `from`: up (PmiFence), or down (PmiFenceComplete,
// with `error` set when the fence failed).
rpc::Outgoing fence_chunk(const std::string& launch_id, int from, bool down,
                          const fence::Chunk& chunk, const std::string& error);

// A name request to the head agent (a call), and its answer: the port found (an error response
// says why not).
NameRequest decode_name(schema::PmiName::Reader m);
rpc::Outgoing name_request(const NameRequest& request);
rpc::Outgoing name_answer(const std::string& port);
Result<std::string> decode_name_answer(const Result<schema::Envelope::Reader>& reply);

// A PMIx direct modex (a call to the rank's node), and its answer: libpmix's blob for the rank.
ModexRequest decode_modex(schema::PmixModex::Reader m);
rpc::Outgoing modex_request(const ModexRequest& request);
rpc::Outgoing modex_answer(const std::string& data);
Result<std::string> decode_modex_answer(const Result<schema::Envelope::Reader>& reply);

// Aborts: lattice::wire::abort_message / decode_abort (shared with the launcher).

// `bindings`: "RANK:CPUS" for each local rank --cpu-bind bound (for the launcher's -v);
// `replied_us`: the time since the request arrived (the launch's clock, Launch::elapsed_us);
// `env_left_out`: LaunchSpec::env_left_out.
rpc::Outgoing launch_accepted(const std::string& node_id, const std::vector<std::string>& bindings,
                              uint64_t replied_us, const std::vector<std::string>& env_left_out);
rpc::Outgoing output(const std::string& launch_id, int rank, bool is_stderr,
                     const std::string& data);
// Of the launch's stdin node `node_index` received, `bytes` in all were taken (StdinTaken).
rpc::Outgoing stdin_taken(const std::string& launch_id, int node_index, uint64_t bytes);

// Relayed launches (launch_relay.hpp). A child's answer to its request as the parent passes it
// up: `reply` is the child's response (LaunchAccepted) or why there is none (then `lost` says
// whether the child was lost rather than refused).
rpc::Outgoing node_answer(const std::string& launch_id, int node_index,
                          const Result<schema::Envelope::Reader>& reply, bool lost);
// A report passed up as it came (the session sets its request id afresh).
rpc::Outgoing copy_of(schema::Envelope::Reader envelope);
// The request for a child: the one this node got, addressed to node `node_index`.
rpc::Outgoing relayed_request(schema::LaunchProcessesRequest::Reader request, int node_index);
rpc::Outgoing rank_exit(const std::string& launch_id, int node_index, int rank, int pid,
                        proc::ExitStatus status);
rpc::Outgoing launch_ended(const std::string& launch_id, int node_index, const LaunchEnd& end);

}  // namespace lattice::agent::wire
