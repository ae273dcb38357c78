// libcurl, loaded the first time a launch talks to the fabric manager rather than linked into
// the launcher: linked, it and the libraries it needs (TLS, Kerberos, LDAP, ...: 30 of them)
// more than doubled the launcher's start-up (5.9 ms of CPU against 2.5) in every launch, though
// only CXI launches use it. The functions keep libcurl's own signatures (curl/curl.h).
//
// libcurl allocates through functions of ours that wipe every block before freeing it (and
// before a growing realloc lets one go): the requests it formats hold the fabric manager's token
// and the answers it receives a launch's CXI key, and neither may linger in freed memory.
#pragma once

#include <curl/curl.h>

#include "base/result.hpp"

namespace lattice::fabric {

struct CurlLibrary {
  decltype(&curl_global_init_mem) global_init_mem;
  decltype(&curl_easy_init) easy_init;
  decltype(&curl_easy_setopt) easy_setopt;
  decltype(&curl_easy_getinfo) easy_getinfo;
  decltype(&curl_easy_cleanup) easy_cleanup;
  decltype(&curl_easy_strerror) easy_strerror;
  decltype(&curl_slist_append) slist_append;
  decltype(&curl_slist_free_all) slist_free_all;
  decltype(&curl_multi_init) multi_init;
  decltype(&curl_multi_setopt) multi_setopt;
  decltype(&curl_multi_add_handle) multi_add_handle;
  decltype(&curl_multi_remove_handle) multi_remove_handle;
  decltype(&curl_multi_socket_action) multi_socket_action;
  decltype(&curl_multi_info_read) multi_info_read;
  decltype(&curl_multi_strerror) multi_strerror;
  decltype(&curl_multi_cleanup) multi_cleanup;
};

// The library, loaded and initialised (curl_global_init_mem, with the wiping allocator) once per
// process; or why it cannot be.
Result<const CurlLibrary*> curl_library();
// Loads and initialises the library of that soname (curl_library's work, for tests).
Result<CurlLibrary> load_curl_library(const char* soname);

}  // namespace lattice::fabric
