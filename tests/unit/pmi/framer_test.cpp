// Framer: PMI-1 lines and PMI-2 frames on one stream, partial input, strict length fields.
#include "pmi/framer.hpp"

#include <doctest/doctest.h>

#include "pmi_test_support.hpp"

namespace lattice::pmi {
namespace {

// Every complete message currently in the framer; FAILs on a framing error.
std::vector<Frame> drain(Framer& f) {
  std::vector<Frame> out;
  while (true) {
    auto next = f.next();
    REQUIRE_MESSAGE(next.ok(), next.error().message);
    if (!*next) return out;
    out.push_back(std::move(**next));
  }
}

std::string error_of(Framer& f) {
  while (true) {
    auto next = f.next();
    if (!next) return next.error().message;
    if (!*next) return "";
  }
}

TEST_CASE("framer: PMI-1 lines, one or many per read") {
  Framer f(kMaxFrameBytes);
  f.feed("cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_maxes\ncmd=get_ap");
  auto frames = drain(f);
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].wire == Wire::pmi1);
  CHECK(frames[0].body == "cmd=init pmi_version=1 pmi_subversion=1\n");
  CHECK(frames[1].body == "cmd=get_maxes\n");
  CHECK(f.pending_bytes() == 10);
  f.feed("pnum\n");
  frames = drain(f);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].body == "cmd=get_appnum\n");
  CHECK(f.pending_bytes() == 0);
}

TEST_CASE("framer: byte-at-a-time input of both wires") {
  // MPICH's PMI-2 start: a PMI-1 init line, then frames (T1 frame included).
  std::string stream = "cmd=init pmi_version=2 pmi_subversion=0\n";
  stream += std::string("44    cmd=fullinit;pmirank=1;threaded=FALSE;\0\0\0\0\0\0", 50);
  stream += test::frame("cmd=kvs-fence;");
  stream += "mcmd=spawn\nnprocs=1\nexecname=a.out\nendcmd\n";
  Framer f(kMaxFrameBytes);
  std::vector<Frame> frames;
  for (char c : stream) {
    f.feed(std::string_view(&c, 1));
    for (auto& fr : drain(f)) frames.push_back(std::move(fr));
  }
  REQUIRE(frames.size() == 4);
  CHECK(frames[0].wire == Wire::pmi1);
  CHECK(frames[1].wire == Wire::pmi2);
  CHECK(frames[1].header == "44    ");
  CHECK(frames[1].body.size() == 44);
  CHECK(frames[2].body == "cmd=kvs-fence;");
  CHECK(frames[3].wire == Wire::pmi1);
  CHECK(frames[3].body == "mcmd=spawn\nnprocs=1\nexecname=a.out\nendcmd\n");
}

TEST_CASE("framer: a prefix of cmd= waits instead of being taken for a length") {
  Framer f(kMaxFrameBytes);
  f.feed("cm");
  CHECK(drain(f).empty());
  f.feed("d=barrier_in\n");
  auto frames = drain(f);
  REQUIRE(frames.size() == 1);
  CHECK(frames[0].body == "cmd=barrier_in\n");
}

TEST_CASE("parse_frame_length: digits and spaces, strictly") {
  CHECK(parse_frame_length("44    ", 100).value() == 44);
  CHECK(parse_frame_length("    44", 100).value() == 44);
  CHECK(parse_frame_length("  44  ", 100).value() == 44);
  CHECK(parse_frame_length("000044", 100).value() == 44);
  CHECK(parse_frame_length("4x    ", 100).error().message ==
        "malformed PMI-2 frame length \"4x    \"");
  CHECK_FALSE(parse_frame_length("4 4   ", 100).ok());
  CHECK_FALSE(parse_frame_length("      ", 100).ok());
  CHECK_FALSE(parse_frame_length("-1    ", 100).ok());
  CHECK_FALSE(parse_frame_length("+1    ", 100).ok());
  CHECK_FALSE(parse_frame_length("\t1    ", 100).ok());
  CHECK(parse_frame_length("0     ", 100).error().message.find("zero") != std::string::npos);
  CHECK(parse_frame_length("101   ", 100).error().message ==
        "PMI-2 frame length \"101   \" exceeds the 100-byte frame limit");
  CHECK(parse_frame_length("100   ", 100).value() == 100);
}

TEST_CASE("framer: malformed and oversized input is an error") {
  SUBCASE("garbage quotes the bytes") {
    Framer f(kMaxFrameBytes);
    f.feed(std::string("\x01\x02hello", 7));
    CHECK(error_of(f) == "malformed PMI-2 frame length \"\\x01\\x02hell\"");
  }
  SUBCASE("a PMI-2 frame over the limit is refused after its header") {
    Framer f(kMaxFrameBytes);
    f.feed("70000 cmd=");
    CHECK(error_of(f).find("65536-byte frame limit") != std::string::npos);
  }
  SUBCASE("a PMI-1 line with no end past the limit") {
    Framer f(32);
    f.feed("cmd=put kvsname=x key=y value=");
    CHECK(error_of(f).empty());
    f.feed("0123456789");
    CHECK(error_of(f).find("32-byte frame limit") != std::string::npos);
  }
  SUBCASE("a PMI-1 line over the limit, even complete") {
    Framer f(16);
    f.feed("cmd=get_universe_size\n");
    CHECK(error_of(f).find("16-byte frame limit") != std::string::npos);
  }
  SUBCASE("a length shorter than the body leaves garbage where the next length should be") {
    Framer f(kMaxFrameBytes);
    f.feed("10    cmd=job-getid;" + test::frame("cmd=kvs-fence;"));
    auto first = f.next();
    REQUIRE(first.ok());
    REQUIRE(first->has_value());
    CHECK((*first)->body == "cmd=job-ge");
    CHECK(error_of(f) == "malformed PMI-2 frame length \"tid;14\"");
  }
  SUBCASE("a length longer than the body waits for bytes that never come") {
    Framer f(kMaxFrameBytes);
    f.feed("40    cmd=job-getid;");
    CHECK(drain(f).empty());
    CHECK(f.pending_bytes() == 20);
  }
}

}  // namespace
}  // namespace lattice::pmi
