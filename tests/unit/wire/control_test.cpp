// Signals and stdin for a running launch round-trip.
#include "wire/control.hpp"

#include <doctest/doctest.h>

using namespace lattice;
using namespace lattice::wire;

TEST_CASE("a signal and a stdin chunk read back") {
  auto sig = signal({"L-1", 15});
  auto s = decode_signal(sig.envelope().asReader().getBody().getSignalProcesses());
  CHECK(s.launch_id == "L-1");
  CHECK(s.signum == 15);

  auto chunk = stdin_chunk("L-1", std::string("in\0put", 6), true);
  auto c = decode_stdin_chunk(chunk.envelope().asReader().getBody().getStdinChunk());
  CHECK(c.launch_id == "L-1");
  CHECK(c.data == std::string("in\0put", 6));
  CHECK(c.eof);
}
