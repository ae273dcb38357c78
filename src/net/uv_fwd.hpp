// libuv's types as net's public headers name them: declared here, defined only in <uv.h>, which
// net's .cpp files alone include, so includers of net get no libuv declarations.
// Owners hold their handle as std::unique_ptr<Handle<...>> (net/detail/handle.hpp) and define
// their constructors and destructor in their .cpp, where Handle is complete.
#pragma once

struct uv_loop_s;
struct uv_stream_s;
struct uv_idle_s;
struct uv_timer_s;
struct uv_signal_s;
struct uv_async_s;
struct uv_poll_s;
struct uv_tcp_s;
struct uv_pipe_s;
union uv_any_handle;

namespace lattice::net {

template <class UvHandle>
class Handle;

}  // namespace lattice::net
