#include "net/child_start.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>

#include "base/strings.hpp"
#include "net/detail/handle.hpp"
#include "net/fd.hpp"

namespace lattice::net {
namespace {

// What failed in the child, for the parent's message.
enum class Stage {
  none,
  cgroup,
  extra_cgroup,
  session,
  user,
  regained_root,
  death_signal,
  fds,
  cpus,
  sched,
  limits,
  cwd,
  exec
};

// Everything the child reads, prepared by the parent, and the one thing it writes.
struct Context {
  const char* file;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  const int* fds;  // high copies, -1 = leave alone
  int nfds;
  bool new_session;
  int death_signal;
  pid_t parent;
  const cpu_set_t* cpus;  // null: unbound
  bool sched_batch;
  const ChildUser* user;   // null: stay who we are; else these, read as plain data:
  const uint32_t* groups;  // user->groups
  size_t ngroups;
  int cgroup_fd;
  const int* extra_cgroup_fds;
  size_t nextra_cgroup_fds;
  int umask;
  const ChildLimit* limits;
  size_t nlimits;
  Stage stage = Stage::none;
  int error = 0;
  size_t failed_limit = 0;
};

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The child runs on its own stack in this process's memory until execve: system calls only,
// and nothing instrumented (a sanitizer's bookkeeping would run on a thread it does not know).
#define LATTICE_CHILD_CODE __attribute__((no_sanitize("address", "undefined")))

[[noreturn]] LATTICE_CHILD_CODE void child_failed(Context* c, Stage stage) {
  c->stage = stage;
  c->error = errno;
  _exit(127);
}

// Raw system calls, not libc's set*id: those change every thread of the process they think they
// are in, and in this child that is the parent's. The kernel changes only this task.
LATTICE_CHILD_CODE void become_user(Context* c) {
  const ChildUser& u = *c->user;
  // Passed as longs: the variadic syscall() reads every argument as one.
  const long uid = u.uid, gid = u.gid;
  if (syscall(SYS_setgroups, static_cast<long>(c->ngroups), c->groups) != 0 ||
      syscall(SYS_setresgid, gid, gid, gid) != 0 || syscall(SYS_setresuid, uid, uid, uid) != 0)
    child_failed(c, Stage::user);
  uid_t r = 0, e = 0, s = 0;
  gid_t rg = 0, eg = 0, sg = 0;
  if (syscall(SYS_getresuid, &r, &e, &s) != 0 || syscall(SYS_getresgid, &rg, &eg, &sg) != 0)
    child_failed(c, Stage::user);
  if (r != u.uid || e != u.uid || s != u.uid || rg != u.gid || eg != u.gid || sg != u.gid) {
    errno = EPERM;
    child_failed(c, Stage::user);
  }
  if (u.uid != 0 && syscall(SYS_setresuid, 0L, 0L, 0L) == 0) {
    errno = EPERM;
    child_failed(c, Stage::regained_root);
  }
}

LATTICE_CHILD_CODE int child_main(void* arg) {
  auto* c = static_cast<Context*>(arg);
  // The parent's handlers must not run here, and what it ignores (SIGPIPE) the child must not.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, nullptr);  // internal ones refuse
  // First, while still this process's user: whatever the child does from here is contained.
  if (c->cgroup_fd >= 0 && syscall(SYS_write, c->cgroup_fd, "0", 1L) != 1)
    child_failed(c, Stage::cgroup);
  for (size_t i = 0; i < c->nextra_cgroup_fds; ++i)
    if (syscall(SYS_write, c->extra_cgroup_fds[i], "0", 1L) != 1)
      child_failed(c, Stage::extra_cgroup);
  if (c->new_session && setsid() < 0) child_failed(c, Stage::session);
  // Before the parent-death signal: the kernel clears it when the effective ids change.
  if (c->user) become_user(c);
  if (c->death_signal != 0) {
    if (prctl(PR_SET_PDEATHSIG, c->death_signal) != 0) child_failed(c, Stage::death_signal);
    if (getppid() != c->parent) _exit(127);  // the parent died before the prctl: nobody to tell
  }
  for (int i = 0; i < c->nfds; ++i) {
    if (c->fds[i] < 0) continue;
    if (dup2(c->fds[i], i) < 0) child_failed(c, Stage::fds);  // (clears CLOEXEC on i)
    if (i <= 2) {  // the child's stdio blocks, whatever the parent's side does
      int flags = fcntl(i, F_GETFL);
      if (flags >= 0 && (flags & O_NONBLOCK)) fcntl(i, F_SETFL, flags & ~O_NONBLOCK);
    }
  }
  if (c->cpus && sched_setaffinity(0, sizeof(cpu_set_t), c->cpus) != 0)
    child_failed(c, Stage::cpus);
  if (c->sched_batch) {
    sched_param param{};
    if (sched_setscheduler(0, SCHED_BATCH, &param) != 0) child_failed(c, Stage::sched);
  }
  for (size_t i = 0; i < c->nlimits; ++i) {
    rlimit limit{};
    c->failed_limit = i;
    const long resource = c->limits[i].resource;
    if (syscall(SYS_prlimit64, 0L, resource, nullptr, &limit) != 0) child_failed(c, Stage::limits);
    limit.rlim_cur = c->limits[i].soft < limit.rlim_max ? c->limits[i].soft : limit.rlim_max;
    if (syscall(SYS_prlimit64, 0L, resource, &limit, nullptr) != 0) child_failed(c, Stage::limits);
  }
  if (c->umask >= 0) syscall(SYS_umask, static_cast<long>(c->umask));
  if (c->cwd && chdir(c->cwd) != 0) child_failed(c, Stage::cwd);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(c->file, c->argv, c->envp);
  child_failed(c, Stage::exec);
}

#if defined(__x86_64__) && defined(SYS_clone3)
// clone3's arguments (linux/sched.h, whose CLONE_* macros would collide with glibc's).
struct CloneArgs {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
      set_tid_size, cgroup;
};
constexpr uint64_t kCloneIntoCgroup = 0x200000000ULL;

// clone3 with the child on its own stack, starting at fn(arg) and exiting with what it returns.
// In assembly: libc has no clone3 wrapper, and through syscall() the child would return into
// frames its new stack does not have. Every register but rax, rcx and r11 comes back from the
// system call as it went in, in both processes, so fn and arg are still in theirs.
LATTICE_CHILD_CODE long clone3_run(CloneArgs* args, int (*fn)(void*), void* arg) {
  long ret = SYS_clone3;
  __asm__ volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "mov %[arg], %%rdi\n\t"
      "call *%[fn]\n\t"
      "mov %%eax, %%edi\n\t"
      "mov $60, %%eax\n\t"  // exit
      "syscall\n\t"
      "ud2\n\t"
      "1:\n\t"
      : "+a"(ret)
      : "D"(args), "S"(sizeof *args), [fn] "r"(fn), [arg] "r"(arg)
      : "rcx", "r11", "memory", "cc");
  return ret;
}
#endif

}  // namespace

Result<int> start_child(const ChildPlan& plan) {
  if (plan.file.empty() || plan.argv.empty())
    return make_error("cannot execute: no program or no argv[0] given");
  std::vector<char*> argv = c_strings(plan.argv);
  std::vector<char*> env = c_strings(plan.env);
  // Every source is first copied above the highest target, so no dup2 in the child can
  // overwrite a source another target still needs.
  int above = std::max<int>(3, static_cast<int>(plan.fds.size()));
  std::vector<UniqueFd> copies;
  std::vector<int> sources(plan.fds.size(), -1);
  for (size_t i = 0; i < plan.fds.size(); ++i) {
    if (plan.fds[i] < 0) continue;
    int copy = ::fcntl(plan.fds[i], F_DUPFD_CLOEXEC, above);
    if (copy < 0) return make_error(cat("cannot pass fd ", plan.fds[i], ": ", uv_error(-errno)));
    copies.emplace_back(copy);
    sources[i] = copy;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : plan.cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return make_error(cat("no CPU ", cpu, " to bind to"));
    CPU_SET(cpu, &set);
  }
  Context c{plan.file.c_str(),
            argv.data(),
            env.data(),
            plan.cwd.empty() ? nullptr : plan.cwd.c_str(),
            sources.data(),
            static_cast<int>(sources.size()),
            plan.new_session,
            plan.parent_death_signal,
            ::getpid(),
            plan.cpus.empty() ? nullptr : &set,
            plan.sched_batch,
            plan.user ? &*plan.user : nullptr,
            plan.user ? plan.user->groups.data() : nullptr,
            plan.user ? plan.user->groups.size() : 0,
            plan.cgroup_procs_fd,
            plan.extra_cgroup_procs_fds.data(),
            plan.extra_cgroup_procs_fds.size(),
            plan.umask,
            plan.limits.data(),
            plan.limits.size()};

  constexpr size_t kStackBytes = 64 * 1024;  // the child calls a few libc wrappers, no more
  auto stack = std::make_unique<char[]>(kStackBytes);
  // No signal may reach a handler of ours while the child runs in our memory.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  long pid = -1;
  int clone_errno = 0;
  bool cloned = false;
#if defined(__x86_64__) && defined(SYS_clone3)
  if (plan.cgroup_dir_fd >= 0) {
    CloneArgs args{};
    args.flags = CLONE_VM | CLONE_VFORK | kCloneIntoCgroup;
    args.exit_signal = SIGCHLD;
    args.stack = reinterpret_cast<uintptr_t>(stack.get());
    args.stack_size = kStackBytes;
    args.cgroup = static_cast<uint64_t>(plan.cgroup_dir_fd);
    c.cgroup_fd = -1;  // born in the cgroup: nothing to join
    pid = clone3_run(&args, child_main, &c);
    // A kernel before 5.7 lacks clone3 or CLONE_INTO_CGROUP: the child joins by cgroup.procs.
    cloned = pid >= 0 || (pid != -ENOSYS && pid != -EINVAL && pid != -E2BIG);
    if (pid < 0) clone_errno = static_cast<int>(-pid);
    if (!cloned) c.cgroup_fd = plan.cgroup_procs_fd;
  }
#endif
  if (!cloned) {
    pid = ::clone(child_main, stack.get() + kStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &c);
    clone_errno = errno;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) return make_error(cat("cannot start '", plan.file, "': ", uv_error(-clone_errno)));
  if (c.stage == Stage::none) return static_cast<int>(pid);

  ::waitpid(static_cast<pid_t>(pid), nullptr, 0);  // it has exited already
  std::string why = uv_error(-c.error);
  switch (c.stage) {
    case Stage::exec:
      return make_error(cat("cannot execute '", plan.file, "': ", why));
    case Stage::cwd:
      return make_error(cat("cannot change to directory '", plan.cwd, "': ", why));
    case Stage::cpus:
      return make_error(cat("cannot bind to CPUs ", compress_ranges(plan.cpus), ": ", why));
    case Stage::sched:
      return make_error(cat("cannot use SCHED_BATCH: ", why));
    case Stage::session:
      return make_error(cat("cannot start '", plan.file, "': setsid: ", why));
    case Stage::user:
      return make_error(
          cat("cannot become uid ", plan.user->uid, " (gid ", plan.user->gid, "): ", why));
    case Stage::regained_root:
      return make_error(
          cat("cannot start '", plan.file, "': uid ", plan.user->uid, " could become root again"));
    case Stage::cgroup:
      return make_error(cat("cannot join the launch's cgroup: ", why));
    case Stage::extra_cgroup:
      return make_error(cat("cannot join the allocation's cgroup: ", why));
    case Stage::limits:
      return make_error(cat("cannot set resource limit ", plan.limits[c.failed_limit].resource,
                            " to ", plan.limits[c.failed_limit].soft, ": ", why));
    case Stage::death_signal:
      return make_error(cat("cannot start '", plan.file, "': prctl: ", why));
    case Stage::fds:
    case Stage::none:
      break;
  }
  return make_error(cat("cannot start '", plan.file, "': dup2: ", why));
}

}  // namespace lattice::net
