// libFuzzer target: an allocation's messages as an agent and a launcher decode them
// (wire/allocation.hpp): AllocationStart (from a key holder), AllocationInfo (the user door's
// answer), AllocationEnd and AllocationEnded. Any message is refused with an error or decodes to
// values within the bounds the decoders promise (a valid id, a user, 1..kMaxAllocationNodes
// nodes with the receiver among them, at most kMaxAllocationGpus GPUs, a CXI key of 1..
// kMaxCxiKeyBytes bytes or none), and what decodes encodes back to a message that decodes to
// the very same values.
// Input: rpc frames, as a link delivers them; every allocation body among them is decoded.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "session_input.hpp"
#include "wire/allocation.hpp"

namespace {

using namespace lattice;
using namespace lattice::wire;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "allocation: %s\n", what);
  std::abort();
}

bool same_user(const JobUser& a, const JobUser& b) {
  return a.uid == b.uid && a.gid == b.gid && a.groups == b.groups && a.name == b.name;
}

bool same_nodes(const std::vector<PeerInfo>& a, const std::vector<PeerInfo>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].node_id != b[i].node_id || a[i].host != b[i].host || a[i].port != b[i].port)
      return false;
  return true;
}

bool same_cxi(const std::optional<CxiKey>& a, const std::optional<CxiKey>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->vni == b->vni && a->svc_id == b->svc_id && a->auth_key->size() == b->auth_key->size() &&
         std::memcmp(a->auth_key->data(), b->auth_key->data(), a->auth_key->size()) == 0;
}

void check_nodes(const std::vector<PeerInfo>& nodes, uint32_t node_index) {
  require(!nodes.empty() && nodes.size() <= kMaxAllocationNodes, "1..kMaxAllocationNodes nodes");
  require(node_index < nodes.size(), "the receiver among the nodes");
}

void check_start(const AllocationSpec& spec) {
  require(valid_allocation_id(spec.id), "a valid id");
  require(!spec.id.empty() && spec.id.size() <= 128 && spec.id[0] != '.' &&
              spec.id.find('/') == std::string::npos,
          "an id that names a file");
  check_nodes(spec.nodes, spec.node_index);
  require(spec.gpus.size() <= kMaxAllocationGpus, "at most kMaxAllocationGpus GPUs");
  if (spec.cxi)
    require(spec.cxi->auth_key && spec.cxi->auth_key->size() >= 1 &&
                spec.cxi->auth_key->size() <= kMaxCxiKeyBytes,
            "a CXI key of 1..kMaxCxiKeyBytes bytes");

  auto again = allocation_start(spec);
  auto back = decode_allocation_start(again.envelope().asReader().getBody().getAllocationStart());
  require(back.ok(), "a decoded start encodes to one that is refused");
  require(back->id == spec.id && same_user(back->user, spec.user) &&
              same_nodes(back->nodes, spec.nodes) && back->node_index == spec.node_index &&
              back->time_limit_ms == spec.time_limit_ms && back->cpus == spec.cpus &&
              back->memory_bytes == spec.memory_bytes && back->gpus == spec.gpus &&
              same_cxi(back->cxi, spec.cxi) && back->slurm_compat == spec.slurm_compat,
          "a start reads back other values than it was encoded with");
}

void check_info(const AllocationInfo& info) {
  check_nodes(info.nodes, info.node_index);
  auto again = allocation_info(info);
  auto back = decode_allocation_info(again.envelope().asReader().getBody().getAllocationInfo());
  require(back.ok(), "a decoded info encodes to one that is refused");
  require(back->id == info.id && same_user(back->user, info.user) &&
              same_nodes(back->nodes, info.nodes) && back->node_index == info.node_index &&
              back->remaining_ms == info.remaining_ms && back->slurm_compat == info.slurm_compat &&
              back->has_cxi == info.has_cxi,
          "an info reads back other values than it was encoded with");
}

void check_end(const AllocationEnd& end) {
  auto again = allocation_end(end);
  auto back = decode_allocation_end(again.envelope().asReader().getBody().getAllocationEnd());
  require(back.id == end.id && back.reason == end.reason, "an end reads back otherwise");
}

void check_ended(const AllocationEnded& ended) {
  auto again = allocation_ended(ended);
  auto back = decode_allocation_ended(again.envelope().asReader().getBody().getAllocationEnded());
  require(back.id == ended.id && back.node_index == ended.node_index &&
              back.reason == ended.reason && back.time_limit == ended.time_limit &&
              back.killed == ended.killed,
          "an ended reads back otherwise");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view frames(reinterpret_cast<const char*>(data), size);
  fuzz::deliver_messages(frames, [](size_t, schema::Envelope::Reader envelope) {
    auto body = envelope.getBody();
    switch (body.which()) {
      case schema::Envelope::Body::ALLOCATION_START: {
        auto spec = decode_allocation_start(body.getAllocationStart());
        if (spec) check_start(*spec);
        break;
      }
      case schema::Envelope::Body::ALLOCATION_INFO: {
        auto info = decode_allocation_info(body.getAllocationInfo());
        if (info) check_info(*info);
        break;
      }
      case schema::Envelope::Body::ALLOCATION_END:
        check_end(decode_allocation_end(body.getAllocationEnd()));
        break;
      case schema::Envelope::Body::ALLOCATION_ENDED:
        check_ended(decode_allocation_ended(body.getAllocationEnded()));
        break;
      default:
        break;
    }
  });
  return 0;
}
