// Exit decoding with our own table of signal names: strsignal() gives prose ("Killed") that
// varies by libc and locale, while users and srun speak of SIGKILL.
#include "proc/exit_status.hpp"

#include <csignal>

#include "base/strings.hpp"

namespace lattice::proc {

int job_exit_code(ExitStatus status) { return status.signal ? 128 + status.signal : status.code; }

namespace {

struct SignalName {
  int signum;
  const char* name;
};

// The signals a rank realistically dies of; others print as numbers.
constexpr SignalName kSignalNames[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"},
};

}  // namespace

std::string signal_name(int signum) {
  for (const auto& entry : kSignalNames)
    if (entry.signum == signum) return entry.name;
  return cat("signal ", signum);
}

int signal_number(const std::string& name) {
  if (auto n = parse_int(name)) return *n >= 1 && *n <= 64 ? static_cast<int>(*n) : 0;
  std::string upper;
  for (char c : name) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  if (!starts_with(upper, "SIG")) upper = "SIG" + upper;
  for (const auto& entry : kSignalNames)
    if (upper == entry.name) return entry.signum;
  return 0;
}

std::string describe(ExitStatus status) {
  if (!status.signal) return cat("exited with status ", status.code);
  std::string name = signal_name(status.signal);
  if (!starts_with(name, "SIG")) return cat("killed by signal ", status.signal);
  return cat("killed by signal ", status.signal, " (", name, ")");
}

}  // namespace lattice::proc
