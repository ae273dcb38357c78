/* lattice-rank-exec: the agent spawns ranks through this when it cannot start them itself. It
 * asks the kernel to SIGKILL it when the agent dies, becomes the job's user (checked against this
 * node's passwd), enters the working directory as that user, binds itself to the CPUs the agent
 * chose (--cpus, before the exec, so the rank and its threads inherit them), and execs the rank.
 * With --describe it runs nothing: it checks the user the same way and prints what becoming them
 * takes (home, shell, groups), so that the agent, which must not wait on passwd lookups, can
 * switch users itself and start each rank with one exec. Every failure is said on stderr and
 * exits 127 (126 when the program is not executable, as shells do; 2 for bad usage). */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

struct options {
  const char* name; /* --user NAME; NULL without --user */
  uid_t uid;
  gid_t gid;
  int have_groups; /* --groups given (its list may be empty) */
  size_t ngroups;
  gid_t* groups;
  const char* dir;
  const char* cpus; /* --cpus 0,2,3: the CPU list to bind to; NULL: unbound */
  int describe;     /* --describe: print the user's home, shell and groups; run nothing */
  char** program;
};

static void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("lattice-rank-exec: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(127);
}

/* A decimal id of len characters, digits only. (id_t)-1 is refused: set*id() read it as
 * "leave unchanged". */
static int parse_id(const char* s, size_t len, unsigned* out) {
  unsigned long long v = 0;
  if (len == 0 || len > 10) return 0;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return 0;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  if (v >= (unsigned)-1) return 0;
  *out = (unsigned)v;
  return 1;
}

static int parse_user(const char* s, struct options* o) {
  const char* c1 = strchr(s, ':');
  const char* c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  unsigned uid, gid;
  if (!c2 || c2[1] == '\0' || !parse_id(s, (size_t)(c1 - s), &uid) ||
      !parse_id(c1 + 1, (size_t)(c2 - c1 - 1), &gid))
    return 0;
  o->uid = uid;
  o->gid = gid;
  o->name = c2 + 1;
  return 1;
}

/* "G1,G2,...": every piece a decimal id; "" is the empty list. */
static int parse_groups(const char* s, struct options* o) {
  size_t n = *s ? 1 : 0;
  for (const char* p = s; *p; p++) n += *p == ',';
  o->groups = malloc((n ? n : 1) * sizeof(gid_t));
  if (!o->groups) die("out of memory");
  for (size_t i = 0; i < n; i++) {
    const char* end = strchrnul(s, ',');
    unsigned gid;
    if (!parse_id(s, (size_t)(end - s), &gid)) return 0;
    o->groups[i] = gid;
    s = end + 1;
  }
  o->ngroups = n;
  o->have_groups = 1;
  return 1;
}

/* Options come first and each at most once; "--" or the first non-option ends them. */
static int parse_options(int argc, char** argv, struct options* o) {
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    const char* opt = argv[i];
    if (strcmp(opt, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(opt, "--describe") == 0 && !o->describe) {
      o->describe = 1;
      continue;
    }
    if (i + 1 >= argc) return 0;
    const char* value = argv[++i];
    if (strcmp(opt, "--user") == 0 && !o->name) {
      if (!parse_user(value, o)) return 0;
    } else if (strcmp(opt, "--groups") == 0 && !o->have_groups) {
      if (!parse_groups(value, o)) return 0;
    } else if (strcmp(opt, "--chdir") == 0 && !o->dir) {
      o->dir = value;
    } else if (strcmp(opt, "--cpus") == 0 && !o->cpus) {
      o->cpus = value;
    } else {
      return 0;
    }
  }
  if (o->have_groups && !o->name) return 0;
  if (o->describe) return o->name && !o->dir && !o->cpus && i >= argc;
  if (i >= argc) return 0;
  o->program = argv + i;
  return 1;
}

/* The agent may have died between fork and prctl: then our parent is already someone else. */
static void guard_parent(long agent_pid) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    perror("lattice-rank-exec: prctl");
    exit(127);
  }
  if ((long)getppid() != agent_pid) exit(127);
}

/* Root switches groups, then gid, then uid (the order in which each call is still allowed),
 * and checks that all three ids of each kind moved and that root cannot be regained. */
static void switch_ids(const struct options* o) {
  if (o->have_groups ? setgroups(o->ngroups, o->groups) : initgroups(o->name, o->gid))
    die("%s: %s", o->have_groups ? "setgroups" : "initgroups", strerror(errno));
  if (setgid(o->gid) != 0) die("setgid(%u): %s", (unsigned)o->gid, strerror(errno));
  if (setuid(o->uid) != 0) die("setuid(%u): %s", (unsigned)o->uid, strerror(errno));
  uid_t ru, eu, su;
  gid_t rg, eg, sg;
  if (getresuid(&ru, &eu, &su) != 0 || getresgid(&rg, &eg, &sg) != 0)
    die("getresuid: %s", strerror(errno));
  if (ru != o->uid || eu != o->uid || su != o->uid || rg != o->gid || eg != o->gid || sg != o->gid)
    die("setuid(%u)/setgid(%u) left uids %u/%u/%u, gids %u/%u/%u", (unsigned)o->uid,
        (unsigned)o->gid, (unsigned)ru, (unsigned)eu, (unsigned)su, (unsigned)rg, (unsigned)eg,
        (unsigned)sg);
  if (o->uid != 0 && setuid(0) == 0) die("setuid(0) still succeeds as uid %u", (unsigned)o->uid);
}

/* "0,2,3" (decimal CPU numbers below CPU_SETSIZE) -> this process's affinity. */
static void bind_cpus(const char* list) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const char* s = list; *s;) {
    const char* end = strchrnul(s, ',');
    unsigned cpu;
    if (!parse_id(s, (size_t)(end - s), &cpu) || cpu >= CPU_SETSIZE)
      die("--cpus: '%s' is not a list of CPU numbers", list);
    CPU_SET(cpu, &set);
    s = *end ? end + 1 : end;
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    die("cannot bind to CPUs %s: %s", list, strerror(errno));
}

static void set_var(const char* name, const char* value) {
  if (setenv(name, value, 1) != 0) die("setenv %s: %s", name, strerror(errno));
}

/* The request names its user by uid and name: both must agree with this node's passwd, or
 * the job would run as whoever owns that uid here. Without root only the current ids pass. */
static struct passwd* lookup_user(const struct options* o, struct passwd* entry, char* buf,
                                  size_t len) {
  struct passwd* pw = NULL;
  int rc = getpwuid_r(o->uid, entry, buf, len, &pw);
  if (rc != 0) die("cannot look up uid %u: %s", (unsigned)o->uid, strerror(rc));
  if (!pw) die("user %s (uid %u) is not known on this node", o->name, (unsigned)o->uid);
  if (strcmp(pw->pw_name, o->name) != 0)
    die("uid %u is '%s' on this node, not '%s'", (unsigned)o->uid, pw->pw_name, o->name);
  if (geteuid() != 0 && o->uid != geteuid())
    die("running as uid %u, cannot start a process as uid %u", (unsigned)geteuid(),
        (unsigned)o->uid);
  if (geteuid() != 0 && o->gid != getegid())
    die("running as gid %u, cannot start a process as gid %u", (unsigned)getegid(),
        (unsigned)o->gid);
  return pw;
}

static void become_user(const struct options* o) {
  struct passwd entry;
  char buf[16384];
  struct passwd* pw = lookup_user(o, &entry, buf, sizeof buf);
  if (geteuid() == 0) switch_ids(o);
  set_var("HOME", pw->pw_dir);
  set_var("USER", pw->pw_name);
  set_var("LOGNAME", pw->pw_name);
  if (pw->pw_shell[0]) set_var("SHELL", pw->pw_shell);
}

/* What initgroups(name, gid) would set, gid among them (malloc'd; *count entries). */
static gid_t* login_groups(const struct options* o, size_t* count) {
  int n = 64;
  gid_t* groups = NULL;
  for (;;) {
    gid_t* more = realloc(groups, (size_t)n * sizeof(gid_t));
    if (!more) die("out of memory");
    groups = more;
    int want = n;
    if (getgrouplist(o->name, o->gid, groups, &want) >= 0) {
      *count = (size_t)want;
      return groups;
    }
    if (want <= n) die("cannot list the groups of %s", o->name);
    n = want;
  }
}

/* home=DIR, shell=PATH and groups=G1,G2,... lines: the supplementary groups that the switch
 * would set (--groups as given, else what initgroups would give). */
static int describe_user(const struct options* o) {
  struct passwd entry;
  char buf[16384];
  struct passwd* pw = lookup_user(o, &entry, buf, sizeof buf);
  size_t count = o->ngroups;
  gid_t* looked_up = o->have_groups ? NULL : login_groups(o, &count);
  const gid_t* groups = o->have_groups ? o->groups : looked_up;
  printf("home=%s\nshell=%s\ngroups=", pw->pw_dir, pw->pw_shell);
  for (size_t i = 0; i < count; i++) printf(i ? ",%u" : "%u", (unsigned)groups[i]);
  printf("\n");
  free(looked_up);
  return fflush(stdout) == 0 ? 0 : 127;
}

int main(int argc, char** argv) {
  struct options o = {0};
  if (!parse_options(argc, argv, &o)) {
    fprintf(stderr,
            "usage: lattice-rank-exec [--user UID:GID:NAME] [--groups G1,G2,...] [--chdir DIR] "
            "[--cpus LIST] [--] PROGRAM [ARGS...]\n"
            "       lattice-rank-exec --describe --user UID:GID:NAME [--groups G1,G2,...]\n");
    free(o.groups); /* a partly parsed list */
    return 2;
  }
  if (o.describe) {
    int rc = describe_user(&o);
    free(o.groups);
    return rc;
  }
  const char* agent = getenv("LATTICE_AGENT_PID");
  long agent_pid = agent ? atol(agent) : 0;
  if (agent) {
    guard_parent(agent_pid);
    unsetenv("LATTICE_AGENT_PID");
  }
  if (o.name) {
    become_user(&o);
    /* The kernel clears the parent-death signal when the effective ids change (prctl(2)). */
    if (agent) guard_parent(agent_pid);
  }
  if (o.cpus) bind_cpus(o.cpus);
  if (o.dir && chdir(o.dir) != 0)
    die("cannot change to directory '%s': %s", o.dir, strerror(errno));
  execvp(o.program[0], o.program);
  int err = errno;
  fprintf(stderr, "lattice-rank-exec: cannot execute '%s': %s\n", o.program[0], strerror(err));
  return err == EACCES ? 126 : 127;
}
