#include "fabric/curl_library.hpp"

#include <dlfcn.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "base/strings.hpp"
#include "base/wipe.hpp"

namespace lattice::fabric {
namespace {

// The soname of libcurl's ABI since 7.16 (2006), the one libcurl4-openssl-dev links against.
constexpr const char* kSoname = "libcurl.so.4";

// libcurl's allocator (curl_library.hpp): malloc's, with every block wiped before it is freed.
// Thread-safe as malloc is (libcurl's resolver threads allocate too).
void* curl_malloc(size_t size) { return std::malloc(size); }
void* curl_calloc(size_t count, size_t size) { return std::calloc(count, size); }
void curl_free(void* block) {
  if (!block) return;
  wipe_bytes(block, ::malloc_usable_size(block));
  std::free(block);
}
// Never glibc's realloc, which may move the bytes and free the old block unwiped.
void* curl_realloc(void* block, size_t size) {
  if (!block) return std::malloc(size);
  const size_t had = ::malloc_usable_size(block);
  if (size <= had) return block;  // it fits: a shrink keeps the block, as realloc may
  void* grown = std::malloc(size);
  if (!grown) return nullptr;  // the old block stays the caller's, as with realloc
  std::memcpy(grown, block, had);
  curl_free(block);
  return grown;
}
char* curl_strdup(const char* text) {
  const size_t size = std::strlen(text) + 1;
  auto* copy = static_cast<char*>(std::malloc(size));
  if (copy) std::memcpy(copy, text, size);
  return copy;
}

}  // namespace

Result<CurlLibrary> load_curl_library(const char* soname) {
  // Never closed: curl keeps global state (and threads of its resolver) for the process.
  void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) return make_error(cat("cannot load ", soname, ": ", ::dlerror()));
  std::string missing;
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle, name));
    if (!fn) missing += cat(missing.empty() ? "" : ", ", name);
  };
  CurlLibrary lib{};
  get(lib.global_init_mem, "curl_global_init_mem");
  get(lib.easy_init, "curl_easy_init");
  get(lib.easy_setopt, "curl_easy_setopt");
  get(lib.easy_getinfo, "curl_easy_getinfo");
  get(lib.easy_cleanup, "curl_easy_cleanup");
  get(lib.easy_strerror, "curl_easy_strerror");
  get(lib.slist_append, "curl_slist_append");
  get(lib.slist_free_all, "curl_slist_free_all");
  get(lib.multi_init, "curl_multi_init");
  get(lib.multi_setopt, "curl_multi_setopt");
  get(lib.multi_add_handle, "curl_multi_add_handle");
  get(lib.multi_remove_handle, "curl_multi_remove_handle");
  get(lib.multi_socket_action, "curl_multi_socket_action");
  get(lib.multi_info_read, "curl_multi_info_read");
  get(lib.multi_strerror, "curl_multi_strerror");
  get(lib.multi_cleanup, "curl_multi_cleanup");
  if (!missing.empty()) return make_error(cat(soname, " lacks ", missing));
  if (CURLcode rc = lib.global_init_mem(CURL_GLOBAL_DEFAULT, curl_malloc, curl_free, curl_realloc,
                                        curl_strdup, curl_calloc);
      rc != CURLE_OK)
    return make_error(cat("curl_global_init_mem failed (", static_cast<int>(rc), ")"));
  return lib;
}

Result<const CurlLibrary*> curl_library() {
  static std::once_flag once;
  static Result<CurlLibrary> loaded = make_error("not loaded");
  std::call_once(once, [] { loaded = load_curl_library(kSoname); });
  if (!loaded) return loaded.error();
  return &loaded.value();
}

}  // namespace lattice::fabric
