// The fabric manager's JSON: what we send, and what we accept back (and refuse).
#include "fabric/cxi_json.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace lattice::fabric;

TEST_CASE("the service request carries the vni, the allocation and the nodes") {
  std::string body = encode_service_request({1234, "alloc-7", {"n1", "n2"}});
  CHECK(body == R"({"allocation_id":"alloc-7","nodes":["n1","n2"],"vni":1234})");
  // Hostile node names stay data.
  CHECK(encode_service_request({1, "a\"b", {"x\ny"}}).find(R"("a\"b")") != std::string::npos);
}

TEST_CASE("a service answer gives the id and svc_id, checked") {
  auto ok = decode_service_created(R"({"id":"svc-12","svc_id":4096,"extra":[1,2]})");
  REQUIRE(ok);
  CHECK(ok->id == "svc-12");
  CHECK(ok->svc_id == 4096);
  auto refused = [](const char* body, const char* needle) {
    auto r = decode_service_created(body);
    REQUIRE_FALSE(r);
    CHECK_MESSAGE(r.error().message.find(needle) != std::string::npos, r.error().message);
  };
  refused("not json", "not JSON");
  refused("[1,2]", "not a JSON object");
  refused(R"({"svc_id":1})", "\"id\"");
  refused(R"({"id":7,"svc_id":1})", "\"id\"");
  refused(R"({"id":"a","svc_id":-1})", "svc_id");
  refused(R"({"id":"a","svc_id":4294967296})", "svc_id");
  refused(R"({"id":"a","svc_id":"1"})", "svc_id");
  refused(R"({"id":"../../admin","svc_id":1})", "characters");
  refused(R"({"id":"a?b","svc_id":1})", "characters");
  refused(R"({"id":"","svc_id":1})", "1 to 128");
  refused(("{\"id\":\"" + std::string(129, 'a') + "\",\"svc_id\":1}").c_str(), "1 to 128");
  refused("{\"id\":\"a\",\"svc_id\":1", "not JSON");  // truncated
}

TEST_CASE("an auth key answer becomes the key's bytes in guarded memory") {
  auto key = decode_auth_key(R"({"auth_key":"00ff10Ab"})");
  REQUIRE(key);
  REQUIRE(key->size() == 4);
  CHECK(key->data()[0] == 0x00);
  CHECK(key->data()[1] == 0xff);
  CHECK(key->data()[2] == 0x10);
  CHECK(key->data()[3] == 0xab);
  for (const char* bad : {R"({"auth_key":""})", R"({"auth_key":"abc"})", R"({"auth_key":"zz"})",
                          R"({"auth_key":12})", R"({"key":"00"})", "{", "null"})
    CHECK_FALSE(decode_auth_key(bad));
  std::string longest = "{\"auth_key\":\"" + std::string(2 * kMaxAuthKeyBytes, 'a') + "\"}";
  CHECK(decode_auth_key(longest));
  std::string too_long = "{\"auth_key\":\"" + std::string(2 * kMaxAuthKeyBytes + 2, 'a') + "\"}";
  CHECK_FALSE(decode_auth_key(too_long));
}

TEST_CASE("an error answer's text: its error or message member, printable and short") {
  CHECK(error_text(R"({"error":"bad token"})") == "bad token");
  CHECK(error_text(R"({"message":"no such vni"})") == "no such vni");
  CHECK(error_text("Internal Server Error\r\n") == "Internal Server Error");
  CHECK(error_text(std::string(500, 'x')).size() == 200);
  CHECK(error_text("a\x01\x1b[31mb") == "a  [31mb");
  CHECK(error_text("") == "");
}
