// Signal watchers live beside timers (timer.hpp); this header exists for callers that only
// need signals.
#pragma once

#include "net/timer.hpp"
