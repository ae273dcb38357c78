// The fabric manager's JSON, both ways, as pure functions (nlohmann-json underneath): the
// service request, the service and auth-key answers, and the text of an error answer. Every
// answer is hostile until checked: ids that go into URLs are restricted to a safe alphabet,
// numbers must fit, the key must be hex of a bounded length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "secure/secret.hpp"

namespace lattice::fabric {

// Longest auth key accepted, in bytes (its hex is twice as long).
inline constexpr size_t kMaxAuthKeyBytes = 256;
// Longest service id accepted (it becomes part of a URL path).
inline constexpr size_t kMaxServiceIdLength = 128;

struct ServiceRequest {
  uint32_t vni = 0;
  std::string allocation_id;
  std::vector<std::string> nodes;
};

struct ServiceCreated {
  std::string id;  // [A-Za-z0-9._:-], 1..kMaxServiceIdLength
  uint32_t svc_id = 0;
};

// {"vni": N, "allocation_id": "...", "nodes": ["...", ...]}
std::string encode_service_request(const ServiceRequest& request);
// {"id": "...", "svc_id": K} (other members ignored)
Result<ServiceCreated> decode_service_created(std::string_view body);
// {"auth_key": "<hex>"} -> the key's bytes in guarded memory. Wipes what the parser copied.
Result<secure::Secret> decode_auth_key(std::string_view body);
// What an error answer says: its "error" or "message" member, else the body's start; printable
// ASCII only, at most 200 characters.
std::string error_text(std::string_view body);

}  // namespace lattice::fabric
