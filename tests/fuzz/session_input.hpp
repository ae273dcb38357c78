// Fuzz input as a peer's link delivers it: rpc frames fed to an rpc::Session, whose handler the
// target supplies, as the agent supplies its own. The session reads them under the limits it
// reads every peer with and catches what capnp's readers throw inside the handler (a malformed
// message then ends the link, as it does in the agent).
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

#include "lattice.capnp.h"

namespace lattice::fuzz {

// Calls `handle(index, envelope)` for each message the frames in `bytes` carry, in order
// (index 0 first), until the input or the session ends.
void deliver_messages(std::string_view bytes,
                      const std::function<void(size_t index, schema::Envelope::Reader)>& handle);

}  // namespace lattice::fuzz
