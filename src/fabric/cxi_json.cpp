#include "fabric/cxi_json.hpp"

#include <nlohmann/json.hpp>

#include "base/strings.hpp"
#include "base/wipe.hpp"

namespace lattice::fabric {
namespace {

using Json = nlohmann::json;

// Parsed without exceptions: a malformed body is a discarded value.
Result<Json> parse(std::string_view body, const char* what) {
  Json json = Json::parse(body.begin(), body.end(), nullptr, false);
  if (json.is_discarded()) return make_error(cat("the ", what, " answer is not JSON"));
  if (!json.is_object()) return make_error(cat("the ", what, " answer is not a JSON object"));
  return json;
}

bool id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (out.size() >= 200) break;
    out += (c >= ' ' && c <= '~') ? c : ' ';
  }
  auto first = out.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

}  // namespace

std::string encode_service_request(const ServiceRequest& request) {
  Json json = {
      {"vni", request.vni}, {"allocation_id", request.allocation_id}, {"nodes", request.nodes}};
  return json.dump();
}

Result<ServiceCreated> decode_service_created(std::string_view body) {
  auto json = parse(body, "service");
  if (!json) return json.error();
  auto id = json->find("id");
  auto svc = json->find("svc_id");
  if (id == json->end() || !id->is_string())
    return make_error("the service answer has no \"id\" string");
  if (svc == json->end() || !svc->is_number_unsigned() || svc->get<uint64_t>() > UINT32_MAX)
    return make_error("the service answer has no \"svc_id\" between 0 and 4294967295");
  ServiceCreated out{id->get<std::string>(), static_cast<uint32_t>(svc->get<uint64_t>())};
  if (out.id.empty() || out.id.size() > kMaxServiceIdLength)
    return make_error(cat("the service id must be 1 to ", kMaxServiceIdLength, " characters"));
  for (char c : out.id)
    if (!id_char(c))
      return make_error("the service id holds characters other than [A-Za-z0-9._:-]");
  return out;
}

Result<secure::Secret> decode_auth_key(std::string_view body) {
  auto json = parse(body, "auth key");
  if (!json) return json.error();
  auto member = json->find("auth_key");
  if (member == json->end() || !member->is_string())
    return make_error("the auth key answer has no \"auth_key\" string");
  std::string& hex = member->get_ref<std::string&>();
  Result<secure::Secret> out =
      make_error(cat("the auth key must be hex of 1 to ", kMaxAuthKeyBytes, " bytes"));
  if (!hex.empty() && hex.size() % 2 == 0 && hex.size() <= 2 * kMaxAuthKeyBytes) {
    secure::Secret key(hex.size() / 2);
    bool ok = true;
    for (size_t i = 0; i < key.size() && ok; ++i) {
      int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
      ok = hi >= 0 && lo >= 0;
      key.data()[i] = static_cast<uint8_t>(ok ? hi * 16 + lo : 0);
    }
    if (ok) out = std::move(key);
  }
  wipe(hex);  // the parser's copy; the caller wipes the body
  return out;
}

std::string error_text(std::string_view body) {
  Json json = Json::parse(body.begin(), body.end(), nullptr, false);
  if (json.is_object())
    for (const char* name : {"error", "message", "detail"})
      if (auto it = json.find(name); it != json.end() && it->is_string())
        return printable(it->get<std::string>());
  return printable(body);
}

}  // namespace lattice::fabric
