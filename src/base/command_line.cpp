#include "base/command_line.hpp"

#include <algorithm>

#include "base/strings.hpp"
#include "base/suggest.hpp"

namespace lattice {
namespace {

bool is_flag(const CLI::Option& o) { return o.get_items_expected_max() == 0; }
bool attached_only(const CLI::Option& o) {
  return o.get_expected_min() == 0 && o.get_expected_max() == 1;
}

Error unknown(const CLI::App& app, const std::string& spelled,
              const std::vector<SingleDash>& single_dash) {
  // Compared without dashes: "-ntasks" and "--ntask" are both typos of "--ntasks".
  auto bare = [](std::string_view name) {
    return std::string(name.substr(std::min(name.find_first_not_of('-'), name.size())));
  };
  std::vector<std::string> words, spellings;
  auto add_long = [&] {
    for (const CLI::Option* o : app.get_options())
      for (const auto& l : o->get_lnames()) words.push_back(l), spellings.push_back("--" + l);
  };
  // Ties go to the first listed: the spelling with as many dashes as the mistyped one.
  const bool single = spelled.size() > 1 && spelled[1] != '-';
  if (!single) add_long();
  for (const auto& s : single_dash) words.push_back(bare(s.name)), spellings.emplace_back(s.name);
  if (single) add_long();
  std::string word = bare(spelled.substr(0, spelled.find('=')));
  std::string message = cat("unknown option '", spelled, "'");
  if (auto nearest = closest(word, words)) {
    size_t at =
        static_cast<size_t>(std::find(words.begin(), words.end(), *nearest) - words.begin());
    message += cat("; did you mean '", spellings[at], "'?");
  }
  return make_error(message);
}

}  // namespace

std::string option_name(const CLI::Option& option) {
  if (!option.get_lnames().empty()) return "--" + option.get_lnames().front();
  return "-" + option.get_snames().front();
}

Result<CommandLine> parse_command_line(CLI::App& app, const std::vector<std::string>& args,
                                       const CommandLineRules& rules) {
  const auto& single_dash = rules.single_dash;
  auto unknown_option = [&](const std::string& spelled) {
    return rules.on_unknown ? rules.on_unknown(spelled) : unknown(app, spelled, single_dash);
  };
  auto spelled = [&](const std::string& name) {
    if (rules.spellings) (*rules.spellings)[app.get_option_no_throw(name)].push_back(name);
  };
  auto spelled_as = [&](const std::string& name, std::string_view as) {
    if (rules.spellings) (*rules.spellings)[app.get_option_no_throw(name)].emplace_back(as);
  };
  CommandLine out;
  std::vector<std::string> options;  // what CLI11 gets: known options and their values
  size_t i = 0;
  for (; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--") {
      out.dashdash = true;
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // the first positional ("-" is no option)
    std::string value;
    bool has_value = false;
    if (auto s = std::find_if(single_dash.begin(), single_dash.end(),
                              [&](const SingleDash& d) { return d.name == arg; });
        s != single_dash.end()) {
      size_t words = s->pair ? 2 : 1;
      arg = std::string(s->target);
      const CLI::Option* target = app.get_option_no_throw(arg);
      spelled_as(arg, s->name);
      if (target && is_flag(*target)) {
        options.push_back(arg);
        continue;
      }
      if (i + words >= args.size())
        return make_error(cat(s->name, " needs ", s->pair ? "a name and a value" : "a value"));
      value = s->pair ? cat(args[i + 1], '=', args[i + 2]) : args[i + 1];
      i += words;
      options.push_back(arg);
      options.push_back(value);
      continue;
    }
    const bool is_long = arg[1] == '-';
    std::string name = is_long ? arg.substr(0, arg.find('=')) : arg.substr(0, 2);
    if (is_long && name.size() < arg.size()) value = arg.substr(name.size() + 1), has_value = true;
    if (!is_long && arg.size() > 2) value = arg.substr(2), has_value = true;
    CLI::Option* option = app.get_option_no_throw(name);
    if (!option) return unknown_option(is_long ? name : arg);
    if (option == app.get_help_ptr()) {
      out.help = true;
      continue;
    }
    spelled(name);
    if (is_flag(*option)) {
      if (!has_value) {
        options.push_back(name);
        continue;
      }
      if (is_long) return make_error(cat(name, " takes no value"));
      // Short flags run together ("-lv"): each letter must be one, but the last may take a value.
      options.push_back(name);
      for (size_t c = 0; c < value.size(); ++c) {
        std::string letter = cat('-', value[c]);
        CLI::Option* next = app.get_option_no_throw(letter);
        if (!next || next == app.get_help_ptr()) return unknown_option(arg);
        spelled(letter);
        if (!is_flag(*next)) {
          options.push_back(letter);
          if (c + 1 < value.size() && attached_only(*next))
            options.back() += value.substr(c + 1);
          else if (c + 1 < value.size())
            options.push_back(value.substr(c + 1));
          else if (attached_only(*next))
            options.back() += next->get_default_str();
          else if (i + 1 < args.size())
            options.push_back(args[++i]);
          else
            return make_error(cat(letter, " needs a value"));
          break;
        }
        options.push_back(letter);
      }
      continue;
    }
    if (attached_only(*option)) {
      // Attached, so CLI11 cannot take it for an option ("-K-n") nor reach past it.
      options.push_back(
          cat(name, is_long ? "=" : "", has_value ? value : option->get_default_str()));
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) return make_error(cat(name, " needs a value"));
      value = args[++i];
    }
    // The value as a word of its own, which CLI11 takes whatever it looks like ("-n -1", "--x=").
    options.push_back(name);
    options.push_back(value);
  }
  out.rest.assign(args.begin() + static_cast<long>(i), args.end());
  std::reverse(options.begin(), options.end());  // CLI11 takes them last first
  try {
    app.parse(options);
  } catch (const CLI::ParseError& e) {
    // Not expected for what is checked above; still one line.
    std::string what = e.what();
    return make_error(what.substr(0, what.find('\n')));
  }
  return out;
}

Options::Options(CLI::App& app) : app_(app) {
  app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

const std::string& Options::spelling(const CLI::Option* option) {
  const auto& given = spellings_[option];
  size_t& used = used_[option];
  if (used < given.size()) return given[used++];
  return name_ = option_name(*option);
}

CLI::Option* Options::value(const std::string& names, Apply apply) {
  CLI::Option* option = app_.add_option(names);
  option->each([this, option, apply = std::move(apply)](const std::string& v) {
    const std::string& flag = spelling(option);
    if (!error_) return;
    if (auto done = apply(flag, v); !done) error_ = done.error();
  });
  return option;
}

CLI::Option* Options::flag(const std::string& names, std::function<void()> set) {
  return app_.add_flag_callback(names, std::move(set));
}

CLI::Option* Options::text(const std::string& names, std::string& target) {
  return value(names, [&target](const std::string& flag, const std::string& v) -> Status {
    if (v.empty()) return make_error(cat(flag, " needs a value"));
    target = v;
    return {};
  });
}

CLI::Option* Options::count(const std::string& names, int max, std::function<void(int)> set) {
  return value(
      names, [max, set = std::move(set)](const std::string& flag, const std::string& v) -> Status {
        auto n = parse_int(v);
        if (!n || *n < 1 || *n > max)
          return make_error(cat(flag, ": expected a number from 1 to ", max, ", got '", v, "'"));
        set(static_cast<int>(*n));
        return {};
      });
}

Result<CommandLine> Options::parse(const std::vector<std::string>& args, CommandLineRules rules) {
  rules.spellings = &spellings_;
  auto line = parse_command_line(app_, args, rules);
  if (!line) return line.error();
  if (!error_) return error_.error();
  return line;
}

}  // namespace lattice
