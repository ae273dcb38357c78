#include "proc/exit_status.hpp"

#include <csignal>

#include "base/strings.hpp"

namespace lattice::proc {

int job_exit_code(ExitStatus status) { return status.signal ? 128 + status.signal : status.code; }

std::string signal_name(int signum) {
  switch (signum) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    default: return cat("signal ", signum);
  }
}

std::string describe(ExitStatus status) {
  if (status.signal) return cat("killed by signal ", status.signal, " (", signal_name(status.signal), ")");
  return cat("exited with status ", status.code);
}

}  // namespace lattice::proc
