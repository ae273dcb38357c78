// Writes the generated seeds of the fuzz targets into DIR/<target>/ (committed under
// tests/fuzz/corpus): capnp frames of every body kind for rpc_session, real handshake messages
// and records for sealed_channel. Run by hand after a schema or handshake change.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "rpc_test_support.hpp"
#include "secure/channel.hpp"

namespace {

using namespace lattice;

void write_seed(const std::filesystem::path& dir, const std::string& name,
                const std::string& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string frame_with_id(rpc::Outgoing& msg, uint64_t id, bool response) {
  msg.envelope().setRequestId(id);
  msg.envelope().setIsResponse(response);
  return rpc::test::frame_of(msg);
}

void rpc_seeds(const std::filesystem::path& dir) {
  // Control byte 0: everything in one receive(), no loopback (see rpc_session_fuzz.cpp).
  std::string all(1, '\0');
  for (auto& msg : rpc::test::one_of_each_body()) all += rpc::test::frame_of(msg);
  write_seed(dir, "every_body_kind", all);

  auto bodies = rpc::test::one_of_each_body();
  write_seed(dir, "launch_request", std::string(1, '\0') + frame_with_id(bodies[1], 7, false));
  write_seed(dir, "fence_chunk_pieces", std::string(1, '\x05') + rpc::test::frame_of(bodies[7]));

  rpc::Outgoing accepted, refused;
  accepted.body().initLaunchAccepted().setNodeId("n1");
  refused.envelope().setError("no such launch");
  write_seed(
      dir, "responses",
      std::string(1, '\0') + frame_with_id(accepted, 1, true) + frame_with_id(refused, 2, true));

  rpc::Outgoing destroy;
  destroy.body().initSignalProcesses().setSignal(99);
  write_seed(
      dir, "loopback_destroy",
      std::string(1, '\x80') + frame_with_id(bodies[3], 9, false) + rpc::test::frame_of(destroy));
}

void channel_seeds(const std::filesystem::path& dir) {
  uint8_t key_bytes[secure::kClusterKeyBytes];
  std::memset(key_bytes, 0x5a, sizeof key_bytes);  // the fuzz target's key
  auto key = secure::ClusterKey::from_bytes(key_bytes);
  // Both record ciphers (bit 2 of the mode byte: XChaCha20-Poly1305 only).
  for (bool xchacha_only : {false, true}) {
    const auto ciphers = xchacha_only
                             ? static_cast<secure::Ciphers>(secure::Cipher::xchacha20poly1305)
                             : secure::local_ciphers();
    const char flag = xchacha_only ? 4 : 0;
    const std::string suffix = xchacha_only ? "_xchacha" : "";
    secure::Channel initiator(secure::Channel::Side::initiator, key,
                              {secure::Role::launcher, "fuzz-launcher"}, {}, ciphers);
    secure::Channel responder(secure::Channel::Side::responder, key, {secure::Role::agent, "n1"},
                              {}, ciphers);
    std::string m1 = initiator.start();
    secure::ChannelOutput m2;
    if (!responder.receive(m1, m2)) std::abort();
    secure::ChannelOutput m3;
    if (!initiator.receive(m2.to_network, m3)) std::abort();
    secure::ChannelOutput done;
    if (!responder.receive(m3.to_network, done) || !responder.established()) std::abort();
    // Mode byte, piece-size byte, payload (see sealed_channel_fuzz.cpp).
    write_seed(dir, "m1" + suffix, std::string{flag, 0} + m1);
    write_seed(dir, "m2" + suffix, std::string{static_cast<char>(flag | 1), 0} + m2.to_network);
    std::string stream = initiator.seal("hello, records") + initiator.seal_final();
    write_seed(dir, "records" + suffix,
               std::string{static_cast<char>(flag | 2), 0} +
                   stream.substr(secure::stream_header_bytes(initiator.cipher())));
  }
  write_seed(dir, "plaintext", std::string("\3\7", 2) + "plaintext in pieces of seven");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::path dir(argv[1]);
  rpc_seeds(dir / "rpc_session");
  channel_seeds(dir / "sealed_channel");
  return 0;
}
