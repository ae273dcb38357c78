/* lattice-bench-rtt-floor: what PMI gets cost on this machine whatever the server does.
 * N client processes (SCHED_BATCH, as lattice's --sched auto starts ranks on a node with more
 * ranks than CPUs) each make GETS round trips over a socketpair, the way Slurm's libpmi2 makes a
 * kvs-get: one write of the command, then a read of the 6-byte length header and one of the
 * body. The server is one epoll loop that answers each request with a fixed reply and does
 * nothing else: no parsing, no lookup, no sealing. Prints one line:
 *   rtt floor: clients=N gets=T wall_us_per_get=W server_us_per_get=S clients_us_per_get=C
 * (CPU from getrusage: the server's own, and the clients' once reaped, their start and exit
 * included: give each client enough gets to bury them). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A libpmi2 kvs-get and its answer, as pmi-wire.md measures them (sizes only matter). */
static const char kRequest[] = "    48cmd=kvs-get;jobid=L1;srcid=-1;key=b0-63-rank-63;";
static const char kReply[] = "    48cmd=kvs-get-response;rc=0;found=TRUE;value=xxxx;";

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(int who) {
  struct rusage ru;
  getrusage(who, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int read_full(int fd, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

static void client(int fd, int gets) {
  struct sched_param none = {0};
  sched_setscheduler(0, SCHED_BATCH, &none);
  char header[6], body[256];
  size_t body_len = sizeof kReply - 1 - 6;
  for (int i = 0; i < gets; ++i) {
    if (write(fd, kRequest, sizeof kRequest - 1) != (ssize_t)(sizeof kRequest - 1)) _exit(1);
    if (read_full(fd, header, 6) || read_full(fd, body, body_len)) _exit(2);
  }
  _exit(0);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: lattice-bench-rtt-floor CLIENTS GETS_EACH\n");
    return 2;
  }
  int n = atoi(argv[1]), gets = atoi(argv[2]);
  if (n < 1 || n > 1024 || gets < 1) return 2;
  int ep = epoll_create1(EPOLL_CLOEXEC);
  int* fds = calloc((size_t)n, sizeof *fds);
  if (ep < 0 || !fds) return 1;
  for (int i = 0; i < n; ++i) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      close(sv[0]);
      client(sv[1], gets);
    }
    close(sv[1]);
    fds[i] = sv[0];
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &e);
  }
  const long total = (long)n * gets;
  const size_t request_len = sizeof kRequest - 1;
  long answered = 0;
  int open = n;
  double cpu0 = cpu_s(RUSAGE_SELF), t0 = now_s();
  char buf[65536];
  struct epoll_event ready[64];
  while (open > 0) {
    int k = epoll_wait(ep, ready, 64, -1);
    for (int j = 0; j < k; ++j) {
      int fd = fds[ready[j].data.u32];
      ssize_t r = read(fd, buf, sizeof buf);
      if (r <= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
        --open;
        continue;
      }
      for (ssize_t q = 0; q < r / (ssize_t)request_len; ++q, ++answered)
        if (write(fd, kReply, sizeof kReply - 1) < 0) return 1;
    }
  }
  double wall = now_s() - t0, server = cpu_s(RUSAGE_SELF) - cpu0;
  while (wait(NULL) > 0) {
  }
  if (answered != total) {
    fprintf(stderr, "answered %ld of %ld gets\n", answered, total);
    return 1;
  }
  printf("rtt floor: clients=%d gets=%ld wall_us_per_get=%.2f server_us_per_get=%.2f "
         "clients_us_per_get=%.2f\n",
         n, total, wall / (double)total * 1e6, server / (double)total * 1e6,
         cpu_s(RUSAGE_CHILDREN) / (double)total * 1e6);
  return 0;
}
