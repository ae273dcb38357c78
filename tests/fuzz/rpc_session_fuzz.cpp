// libFuzzer target: rpc frame decoder + envelope + Session (src/rpc) over a fake ByteTransport,
// with handlers that read every field of every message (envelope_fields.cpp) and answer requests.
// Two calls are pending, so responses reach callbacks; each must complete exactly once.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "envelope_fields.hpp"
#include "rpc/session.hpp"

// Input: one control byte, then the bytes the peer sent.
//   bit 7: loopback (what the session writes is fed straight back into it, re-entering it)
//   bits 0-6: delivery piece size (0 = everything in one receive())
// The requests of the two pending calls have ids 1 and 2; a signalProcesses notification with
// signal 99 makes the handler destroy the session (the owner-destroys-me path).
namespace {

using namespace lattice;
using namespace lattice::rpc;
using lattice::fuzz::read_every_field;

constexpr int kDestroySignal = 99;
volatile size_t g_sink;  // keeps the field reads observable

struct Transport : ByteTransport {
  void write(std::string bytes) override {
    written += bytes.size();
    if (loopback && session) session->receive(bytes);
  }
  void close() override { closed = true; }

  Session* session = nullptr;
  bool loopback = false;
  bool closed = false;
  size_t written = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Transport transport;
  transport.loopback = (data[0] & 0x80) != 0;
  const size_t piece = data[0] & 0x7f;
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

  std::unique_ptr<Session> session;
  size_t sink = 0;
  Session::Handlers handlers;
  handlers.on_message = [&](uint64_t request_id, schema::Envelope::Reader envelope) {
    sink += read_every_field(envelope);
    auto body = envelope.getBody();
    if (body.isSignalProcesses() && body.getSignalProcesses().getSignal() == kDestroySignal) {
      transport.session = nullptr;
      session.reset();
      return;
    }
    if (request_id == 0) return;
    if (body.isLaunchProcesses()) {
      Outgoing reply;
      reply.body().initLaunchAccepted().setNodeId(body.getLaunchProcesses().getLaunchId());
      session->respond(request_id, std::move(reply));
    } else {
      session->respond_error(request_id, "fuzz: refused");
    }
  };
  handlers.on_error = [&](const std::string& reason) { sink += reason.size(); };
  session = std::make_unique<Session>(transport, handlers);
  transport.session = session.get();

  std::array<int, 2> completions{};
  for (size_t i = 0; i < completions.size() && session; ++i) {
    Outgoing request;
    request.body().initLaunchProcesses().setLaunchId("fuzz-" + std::to_string(i));
    session->call(std::move(request), 100 * (i + 1), [&, i](Result<schema::Envelope::Reader> r) {
      ++completions[i];
      if (r) sink += read_every_field(*r);
    });
  }

  while (session && !input.empty()) {
    size_t n = piece == 0 ? input.size() : std::min(piece, input.size());
    session->receive(input.substr(0, n));
    input.remove_prefix(n);
  }
  if (session) {
    session->expire(150);
    session->fail_all("fuzz: end of input");
    if (session->pending() != 0) std::abort();
  }
  // A destroyed session drops its calls uncalled; otherwise each completed exactly once.
  for (int count : completions)
    if (count > 1 || (session && count != 1)) std::abort();
  g_sink = sink;
  return 0;
}
