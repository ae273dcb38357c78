// Net's public headers keep libuv to themselves, so that link/, agent/, launcher/ and
// tests get no libuv declarations from them. A compile-time check: this file includes every
// public net header and nothing that brings <uv.h> in by design.
#include "net/address.hpp"
#include "net/connect.hpp"
#include "net/fd.hpp"
#include "net/listener.hpp"
#include "net/loop.hpp"
#include "net/loopback_owner.hpp"
#include "net/peer_credentials.hpp"
#include "net/process.hpp"
#include "net/signal.hpp"
#include "net/sock_diag.hpp"
#include "net/stream.hpp"
#include "net/timer.hpp"
#include "net/uv_fwd.hpp"

#ifdef UV_VERSION_MAJOR
#error "a public header of net/ includes <uv.h>: name libuv's types through net/uv_fwd.hpp"
#endif
