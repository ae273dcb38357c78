#include "secure/channel.hpp"

namespace lattice::secure {

Channel::Channel(Side side, const Credentials& credentials, Identity self,
                 std::shared_ptr<const EphemeralKey> shared, Ciphers ciphers)
    : handshake_(std::make_unique<Handshake>(side, credentials, std::move(self), std::move(shared),
                                             ciphers)) {}

Channel::~Channel() = default;

std::string Channel::start() { return handshake_ ? handshake_->start() : std::string(); }

Status Channel::receive(std::string_view bytes, ChannelOutput& out) {
  if (failed_) return *failed_;
  if (handshake_) {
    auto done = handshake_->receive(bytes, out.to_network);
    if (!done) {
      failed_ = done.error();
      return *failed_;
    }
    if (!*done) return {};
    auto result = handshake_->take_result();
    handshake_.reset();
    peer_ = std::move(result.peer);
    certified_key_ = result.certified_key;
    cipher_ = result.cipher;
    writer_ = std::make_unique<RecordWriter>(result.send_key, result.cipher);
    reader_ = std::make_unique<RecordReader>(result.receive_key, result.cipher);
    out.established = true;
  }
  if (bytes.empty()) return {};
  auto read = reader_->read(bytes, out.plaintext);
  if (!read) failed_ = read.error();
  return read;
}

std::string Channel::seal(std::string_view plaintext) {
  std::string out;
  if (writer_) writer_->seal(plaintext, out);
  return out;
}

std::string Channel::seal_final() {
  std::string out;
  if (writer_) writer_->seal_final(out);
  return out;
}

}  // namespace lattice::secure
