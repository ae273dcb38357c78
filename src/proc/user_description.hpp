// What `lattice-rank-exec --describe` prints about the job's user: passwd's home and shell and
// the supplementary groups a switch to that user sets. The agent reads it once per launch (the
// helper does the passwd and group lookups, which may block) and then becomes the user in each
// rank's child itself. The text comes from another process: every line is checked and bounded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "proc/own_user.hpp"

namespace lattice::proc {

// More than the longest list a kernel takes (NGROUPS_MAX, 65536 groups of 10 digits and a comma)
// with a home and a shell.
constexpr size_t kMaxUserDescriptionBytes = 1 << 20;
constexpr size_t kMaxGroups = 65536;

// "home=DIR\nshell=PATH\ngroups=G1,G2,...\n", exactly: the user (uid, gid, name as the request
// named them) with that home, shell and groups; or why the text is refused.
Result<ProcessUser> parse_user_description(std::string_view text, uint32_t uid, uint32_t gid,
                                           std::string name);

}  // namespace lattice::proc
