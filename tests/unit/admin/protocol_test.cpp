// The admin socket's bytes: the agent takes one bounded request line however the client sends
// it, and `lattice admin` bounds the answer and prints nothing a terminal would act on.
#include "admin/protocol.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace lattice::admin;

TEST_CASE("a request is the line up to its newline, in whatever pieces it comes, once") {
  RequestBuffer request;
  CHECK_FALSE(request.add("sta"));
  CHECK_FALSE(request.add(""));
  CHECK(request.add("tus L1\nstatus\n") == std::string("status L1"));
  CHECK_FALSE(request.add("status\n"));  // one answer per client
}

TEST_CASE("a request without a newline ends at the limit, and is cut there") {
  RequestBuffer slow;
  std::string part(kMaxRequestBytes / 2, 'x');
  CHECK_FALSE(slow.add(part));
  auto line = slow.add(part + std::string(100000, 'y'));
  REQUIRE(line);
  CHECK(line->size() == kMaxRequestBytes);
  CHECK(line->back() == 'x');

  RequestBuffer at_once;
  line = at_once.add(std::string(3 * kMaxRequestBytes, 'z') + "\n");
  REQUIRE(line);
  CHECK(line->size() == kMaxRequestBytes);
}

TEST_CASE("an answer is printed with control bytes escaped, its error said") {
  AnswerBuffer buffer;
  CHECK(buffer.add("launch L1: node 0 of 1\n"));
  CHECK(buffer.add("  0  42  initialized  \x1b]0;owned\x07  0.0s  0\n"));
  Answer answer = buffer.take();
  CHECK(answer.text ==
        "launch L1: node 0 of 1\n  0  42  initialized  \\x1b]0;owned\\x07  0.0s  0\n");
  CHECK_FALSE(answer.error);
  CHECK_FALSE(answer.cut);

  AnswerBuffer refused;
  refused.add("error: unknown request 'x' (try: status)\n");
  CHECK(refused.take().error);
  CHECK(AnswerBuffer().take().text.empty());
}

TEST_CASE("an answer is cut at its limit, and says so") {
  AnswerBuffer buffer;
  std::string chunk(1 << 20, 'a');
  size_t chunks = 0;
  while (buffer.add(chunk)) ++chunks;
  CHECK(chunks == kMaxAnswerBytes / chunk.size() - 1);
  Answer answer = buffer.take();
  CHECK(answer.cut);
  CHECK(answer.text.size() == kMaxAnswerBytes);
}
