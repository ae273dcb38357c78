// The command lines' shared front (lattice launch/alloc/admin, lattice-agentd): CLI11 parses the
// options; this finds where they end (the program, or "--"), takes mpiexec's single-dash long
// spellings, and turns every mistake into one line that names the nearest real option.
// Only the parsers' .cpp files include it: CLI11 is a large header.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace lattice {

// A single-dash long option as mpiexec spells it ("-ppn 2"), read as `target` ("--ppn").
// `pair`: it takes two words, given on as one NAME=VALUE ("-genv K V" -> "--genv=K=V").
struct SingleDash {
  std::string_view name;    // with its dash: "-ppn"
  std::string_view target;  // an option of the app: "--tasks-per-node"
  bool pair = false;
};

struct CommandLine {
  std::vector<std::string> rest;  // from the first word that is no option (after "--" if given)
  bool dashdash = false;          // "--" came before `rest`
  bool help = false;              // -h/--help among the options
};

// Parses the options at the front of `args` into `app` and returns the rest. Every option of
// `app` is a flag or takes one value (separate, attached -n4, or --name=V); one declared with
// expected(0, 1) takes its value only attached, else its default_str (srun's -K, -K0). The app's
// help flag is reported, not acted on. Errors: "unknown option '--ntask'; did you mean
// '--ntasks'?", "--ntasks needs a value", "--label takes no value".
// Every option's names as the command line spelled them, in order ("-N", "--nodes", "-np"),
// known before CLI11 runs the options' callbacks: errors name an option as the user did.
using Spellings = std::map<const CLI::Option*, std::vector<std::string>>;

struct CommandLineRules {
  std::vector<SingleDash> single_dash;
  // The error for an unknown option (as spelled); default: "unknown option ...; did you mean".
  std::function<Error(const std::string&)> on_unknown;
  Spellings* spellings = nullptr;  // filled, if given
};

Result<CommandLine> parse_command_line(CLI::App& app, const std::vector<std::string>& args,
                                       const CommandLineRules& rules = {});

// Options whose values pure parsers check, declared on `app`. Each `apply` gets the option's name
// as spelled (for its errors) and one value, for every time the option is given, in order; the
// first error is kept. Options may be given again (the last value wins where one is kept).
class Options {
 public:
  using Apply = std::function<Status(const std::string& flag, const std::string& value)>;
  explicit Options(CLI::App& app);
  Options(const Options&) = delete;
  Options& operator=(const Options&) = delete;

  CLI::Option* value(const std::string& names, Apply apply);
  CLI::Option* flag(const std::string& names, std::function<void()> set);
  // A value kept as it is, once it is not empty ("--user=" needs a value).
  CLI::Option* text(const std::string& names, std::string& target);
  // A whole number from 1 to max: "-N: expected a number from 1 to 65536, got '0'".
  CLI::Option* count(const std::string& names, int max, std::function<void(int)> set);

  // parse_command_line with this wiring's spellings; then the first value's error, if any.
  Result<CommandLine> parse(const std::vector<std::string>& args, CommandLineRules rules = {});

 private:
  const std::string& spelling(const CLI::Option* option);

  CLI::App& app_;
  Status error_;
  Spellings spellings_;
  std::map<const CLI::Option*, size_t> used_;
  std::string name_;
};

// Where an option's name goes in an error: the name it was given by ("-n"), else its first long
// name.
std::string option_name(const CLI::Option& option);

}  // namespace lattice
