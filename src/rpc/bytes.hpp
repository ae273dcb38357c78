// Raw bytes in and out of a Cap'n Proto Data field (output chunks, stdin, PMIx blobs,
// escape-hatch output): one spelling of the casts, for every codec on both sides.
#pragma once

#include <capnp/blob.h>

#include <string>
#include <string_view>

namespace lattice::rpc {

// A view of `bytes` for a Data setter (capnp copies it into the message).
inline capnp::Data::Reader as_data(std::string_view bytes) {
  return capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(bytes.data()), bytes.size());
}

// A copy out of a Data field (readers die with the message).
inline std::string as_string(capnp::Data::Reader data) {
  return std::string(reinterpret_cast<const char*>(data.begin()), data.size());
}

}  // namespace lattice::rpc
