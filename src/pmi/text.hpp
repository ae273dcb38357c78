// Small text helpers of the PMI engine: quoting client bytes for messages and traces (through
// printable(), base/strings.hpp), and the token rule of PMI-1, whose values cannot hold spaces.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/strings.hpp"

namespace lattice::pmi {

// Client bytes quoted into an error message are cut after this many bytes, so one hostile
// frame cannot make a multi-kilobyte log line.
constexpr size_t kQuoteMaxBytes = 64;

// printable(), cut to kQuoteMaxBytes (marked "..."), in double quotes.
std::string quoted(std::string_view bytes);
// True when a PMI-1 client can read `value` back as one token: no byte <= 0x20, no 0x7f.
bool is_pmi1_token(std::string_view value);
// Free text (a message) made into one PMI-1 token: spaces and control bytes become '_'.
std::string pmi1_token(std::string_view text);

}  // namespace lattice::pmi
