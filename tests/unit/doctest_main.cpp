// Shared doctest main: ignores SIGPIPE (a test that writes to a closed socket must see EPIPE,
// not die) and otherwise runs doctest as usual.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <csignal>

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  return doctest::Context(argc, argv).run();
}
