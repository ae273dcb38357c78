#include "session_input.hpp"

#include <string>

#include "rpc/session.hpp"

namespace lattice::fuzz {
namespace {

struct NullTransport : rpc::ByteTransport {
  void write(std::string) override {}
  void close() override {}
};

}  // namespace

void deliver_messages(std::string_view bytes,
                      const std::function<void(size_t, schema::Envelope::Reader)>& handle) {
  NullTransport transport;
  size_t index = 0;
  rpc::Session::Handlers handlers;
  handlers.on_message = [&](uint64_t, schema::Envelope::Reader envelope) {
    handle(index++, envelope);
  };
  rpc::Session session(transport, handlers);
  session.receive(bytes);
}

}  // namespace lattice::fuzz
