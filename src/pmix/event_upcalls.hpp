// Part of lattice-pmix.so (with libpmix): events, job control and their answers (issue 33's
// parts 3 and 4), beside server.cpp, which owns the queue their upcalls post to.
#pragma once

#include <pmix_server.h>

#include <functional>
#include <string>

#include "pmix/server.hpp"

namespace lattice::pmix {

// server.cpp: from libpmix's thread, runs `run` on the owner's thread (drain) with the
// namespace's events, or with null when `nspace` is not (or no longer) registered.
void post_call(std::string nspace, std::function<void(NamespaceEvents*)> run);

// event_upcalls.cpp: the module's notify_event and job_control.
void add_event_upcalls(pmix_server_module_t& module);
void notify_clients(const std::string& nspace, const EventNotice& notice,
                    std::function<void(Status)> done);
void answer_control_call(const ControlCall& call, Answer answer);

}  // namespace lattice::pmix
