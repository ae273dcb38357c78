// lattice-bench-handshake: what sealing costs in CPU, without the network: full handshakes
// between two in-memory channels (both sides' work), and sealing + opening of records of 100 B
// and 64 KiB under the cipher two such machines choose (and under XChaCha20-Poly1305 too, the
// fallback, when that is not it). Prints one "name=value" line per figure for bench/bench.py.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "secure/channel.hpp"

using namespace lattice::secure;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One handshake, both sides; returns false on a failure (which would be a bug).
bool handshake(Channel& i, Channel& r) {
  ChannelOutput ro, io, r3;
  if (!r.receive(i.start(), ro)) return false;
  if (!i.receive(ro.to_network, io)) return false;
  if (!r.receive(io.to_network, r3)) return false;
  return i.established() && r.established();
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 2000;
  uint8_t raw[kClusterKeyBytes];
  std::memset(raw, 42, sizeof raw);
  Credentials key(ClusterKey::from_bytes(raw));

  // Version 3 (Noise) and version 2, which this release still answers.
  for (uint8_t version : {kHandshakeVersion, kOldestHandshakeVersion}) {
    key.initiate_version = version;
    auto t0 = Clock::now();
    for (int n = 0; n < rounds; ++n) {
      Channel i(Channel::Side::initiator, key, {Role::launcher, "bench"});
      Channel r(Channel::Side::responder, key, {Role::agent, "n1"});
      if (!handshake(i, r)) return 1;
    }
    std::printf("%shandshake_us=%.1f\n", version == kHandshakeVersion ? "" : "v2_",
                seconds_since(t0) / rounds * 1e6);
  }
  key.initiate_version = kHandshakeVersion;

  const auto xchacha = static_cast<Ciphers>(Cipher::xchacha20poly1305);
  for (Ciphers offer : {local_ciphers(), xchacha}) {
    Channel i(Channel::Side::initiator, key, {Role::launcher, "bench"}, {}, offer);
    Channel r(Channel::Side::responder, key, {Role::agent, "n1"}, {}, offer);
    if (!handshake(i, r)) return 1;
    const bool fallback = offer != local_ciphers();
    if (fallback && local_ciphers() == xchacha) break;  // measured already
    const char* prefix = fallback ? "xchacha_" : "";
    if (!fallback) std::printf("cipher=%s\n", cipher_name(i.cipher()));
    for (size_t size : {size_t{100}, size_t{64 * 1024}}) {
      std::string plain(size, 'x');
      int frames = size == 100 ? 200000 : 4000;
      auto t1 = Clock::now();
      for (int n = 0; n < frames; ++n) {
        ChannelOutput out;
        if (!r.receive(i.seal(plain), out) || out.plaintext.size() != size) return 1;
      }
      double s = seconds_since(t1);
      std::printf("%sseal_open_%zu_us=%.3f\n%sseal_open_%zu_MBps=%.0f\n", prefix, size,
                  s / frames * 1e6, prefix, size, static_cast<double>(size) * frames / s / 1e6);
    }
  }
  return 0;
}
