#include "wire/fence_chunk.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "base/strings.hpp"
#include "fence/kv_pack.hpp"

namespace lattice::wire {
namespace {

// Capnp words a text of `bytes` takes (its NUL included).
size_t text_words(size_t bytes) { return (bytes + 1 + 7) / 8; }

// PmiFence (up) and PmiFenceComplete (down) carry a chunk the same way.
template <class Reader>
Result<FenceMessage> decode_chunk(Reader m, bool down) {
  FenceMessage out;
  out.launch_id = m.getLaunchId();
  out.down = down;
  out.from = static_cast<int>(m.getFromNode());
  out.chunk.epoch = m.getEpoch();
  out.chunk.index = m.getChunkIndex();
  out.chunk.count = m.getChunkCount();
  auto data = m.getEntries();
  std::string_view packed(reinterpret_cast<const char*>(data.begin()), data.size());
  auto keys = fence::count_packed(packed);
  if (!keys)
    return make_error(cat("a fence chunk from node ", out.from, " for launch ", out.launch_id,
                          " is malformed: ", keys.error().message));
  out.chunk.keys = keys.value();
  out.chunk.entries = std::make_shared<const std::string>(packed);  // its one copy here
  return out;
}

template <class Builder>
Builder fill_chunk(Builder m, const std::string& launch_id, int from, const fence::Chunk& chunk) {
  m.setLaunchId(launch_id);
  m.setEpoch(chunk.epoch);
  m.setFromNode(static_cast<uint32_t>(from));
  m.setChunkIndex(chunk.index);
  m.setChunkCount(chunk.count);
  const std::string& packed = *chunk.entries;
  auto data = m.initEntries(static_cast<unsigned>(packed.size()));
  std::memcpy(data.begin(), packed.data(), packed.size());
  return m;
}

}  // namespace

Result<FenceMessage> decode_fence_up(schema::PmiFence::Reader m) { return decode_chunk(m, false); }

Result<FenceMessage> decode_fence_down(schema::PmiFenceComplete::Reader m) {
  auto out = decode_chunk(m, true);
  if (out) out->error = m.getErrorMessage();
  return out;
}

rpc::Outgoing fence_chunk(const std::string& launch_id, int from, bool down,
                          const fence::Chunk& chunk, const std::string& error) {
  // The message's size, so that it is one segment (rpc/outgoing.hpp): the envelope and chunk
  // structs, the texts, and the packed entries.
  const size_t packed = chunk.entries->size();
  const size_t words =
      32 + text_words(launch_id.size()) + text_words(error.size()) + (packed + 7) / 8;
  rpc::Outgoing msg(static_cast<unsigned>(words));
  auto body = msg.envelope().initBody();
  if (down)
    fill_chunk(body.initPmiFenceComplete(), launch_id, from, chunk).setErrorMessage(error);
  else
    fill_chunk(body.initPmiFence(), launch_id, from, chunk);
  return msg;
}

}  // namespace lattice::wire
