/* An LD_PRELOAD shim for the shared-node tests: the process claims the uid and gid in
 * LATTICE_TEST_FAKE_UID / LATTICE_TEST_FAKE_GID (what a hostile local user does to a library
 * that believes what its process says it is). The kernel's view is unchanged. */
#include <stdlib.h>
#include <sys/types.h>

static unsigned fake(const char* name, unsigned real) {
  const char* v = getenv(name);
  return v ? (unsigned)strtoul(v, NULL, 10) : real;
}

uid_t getuid(void) { return fake("LATTICE_TEST_FAKE_UID", 65534); }
uid_t geteuid(void) { return fake("LATTICE_TEST_FAKE_UID", 65534); }
gid_t getgid(void) { return fake("LATTICE_TEST_FAKE_GID", 65534); }
gid_t getegid(void) { return fake("LATTICE_TEST_FAKE_GID", 65534); }
