// A sealed link's byte layer, without I/O: the handshake first, then sealed records both ways.
// The owner feeds it what the network delivered and writes out what it returns; plaintext goes
// up to the rpc session. Before the handshake completes a peer can make it hold at most
// kMaxHandshakeMessage bytes; afterwards at most one record.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "secure/credentials.hpp"
#include "secure/handshake.hpp"
#include "secure/identity.hpp"
#include "secure/record.hpp"

namespace lattice::secure {

struct ChannelOutput {
  std::string to_network;    // handshake replies
  std::string plaintext;     // opened records, for the session
  bool established = false;  // the handshake completed in this call
};

class Channel {
 public:
  using Side = Handshake::Side;
  // `credentials` must outlive the channel.
  // `shared`, `ciphers`: as for Handshake.
  Channel(Side side, const Credentials& credentials, Identity self,
          std::shared_ptr<const EphemeralKey> shared = {}, Ciphers ciphers = local_ciphers());
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // The initiator's first bytes (empty for a responder).
  std::string start();
  // Network bytes in. An error means the link must be dropped; its text is the reason to log.
  // Every later call returns the same error.
  Status receive(std::string_view bytes, ChannelOutput& out);
  // Plaintext -> records, once established (before that: empty, nothing sent).
  std::string seal(std::string_view plaintext);
  // The closing record (clean close): the peer can tell it from a truncated stream.
  std::string seal_final();

  bool established() const { return writer_ != nullptr; }
  const Identity& peer() const { return peer_; }  // valid once established
  // The peer's static key, when this side checked its certificate (revocations are by key).
  const std::optional<StaticKey>& certified_key() const { return certified_key_; }
  Cipher cipher() const { return cipher_; }  // likewise
  bool peer_finished() const { return reader_ && reader_->finished(); }
  // Why the handshake was refused (none while it runs, once it completed, or for a broken
  // record).
  Refusal refusal() const { return handshake_ ? handshake_->refusal() : Refusal::none; }

 private:
  std::unique_ptr<Handshake> handshake_;
  std::unique_ptr<RecordWriter> writer_;
  std::unique_ptr<RecordReader> reader_;
  Identity peer_;
  std::optional<StaticKey> certified_key_;
  Cipher cipher_ = Cipher::xchacha20poly1305;
  std::optional<Error> failed_;
};

}  // namespace lattice::secure
