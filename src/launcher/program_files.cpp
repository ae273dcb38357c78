#include "launcher/program_files.hpp"

#include <algorithm>
#include <optional>

#include "base/strings.hpp"

namespace lattice::launcher {
namespace {

constexpr int kMaxRanks = 1 << 20;

// A line's words: split at blanks, '...' and "..." quote (no escapes); '#' outside quotes ends it.
Result<std::vector<std::string>> words_of(const std::string& line, size_t number) {
  std::vector<std::string> words;
  std::optional<std::string> word;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        *word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      if (!word) word.emplace();
    } else if (c == '#') {
      break;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      if (word) words.push_back(std::move(*word)), word.reset();
    } else {
      if (!word) word.emplace();
      *word += c;
    }
  }
  if (quote) return make_error(cat("line ", number, ": a quote is not closed"));
  if (word) words.push_back(std::move(*word));
  return words;
}

// A --multi-prog line's ranks: "*" (nullopt), or a list of N and LOW-HIGH.
Result<std::optional<std::vector<int>>> ranks_of(const std::string& text, size_t number) {
  if (text == "*") return std::optional<std::vector<int>>();
  std::vector<int> ranks;
  for (const auto& item : split(text, ',')) {
    auto dash = item.find('-');
    auto low = parse_int(item.substr(0, dash));
    auto high = dash == std::string::npos ? low : parse_int(item.substr(dash + 1));
    if (!low || !high || *low < 0 || *high < *low || *high >= kMaxRanks ||
        ranks.size() + static_cast<size_t>(*high - *low) >= static_cast<size_t>(kMaxRanks))
      return make_error(cat("--multi-prog: line ", number,
                            ": expected ranks such as 0-3,5 or '*', got '", text, "'"));
    for (auto r = *low; r <= *high; ++r) ranks.push_back(static_cast<int>(r));
  }
  return std::optional<std::vector<int>>(std::move(ranks));
}

std::string substitute(const std::string& word, int rank, int offset) {
  std::string out;
  for (size_t i = 0; i < word.size(); ++i) {
    if (word[i] == '%' && i + 1 < word.size() && (word[i + 1] == 't' || word[i + 1] == 'o')) {
      out += std::to_string(word[++i] == 't' ? rank : offset);
    } else {
      out += word[i];
    }
  }
  return out;
}

struct Line {
  size_t number;
  std::vector<std::string> command;  // program, args
};

}  // namespace

Result<std::vector<App>> parse_multi_prog(std::string_view text, int ntasks) {
  if (ntasks < 0 || ntasks > kMaxRanks) return make_error("--multi-prog: bad -n");
  std::vector<Line> lines;
  std::vector<std::optional<std::vector<int>>> rank_lists;
  int highest = -1;
  size_t number = 0;
  for (const auto& raw : split(text, '\n')) {
    ++number;
    auto words = words_of(raw, number);
    if (!words) return make_error(cat("--multi-prog: ", words.error().message));
    if (words->empty()) continue;
    if (words->size() < 2)
      return make_error(cat("--multi-prog: line ", number, ": expected RANKS PROGRAM [ARGS...]"));
    if ((*words)[1].empty()) return make_error(cat("--multi-prog: line ", number, ": no program"));
    auto ranks = ranks_of(words->front(), number);
    if (!ranks) return ranks.error();
    if (*ranks)
      for (int r : **ranks) highest = std::max(highest, r);
    rank_lists.push_back(std::move(ranks.value()));
    lines.push_back({number, {words->begin() + 1, words->end()}});
  }
  const bool star = std::any_of(rank_lists.begin(), rank_lists.end(),
                                [](const auto& l) { return !l.has_value(); });
  if (ntasks == 0) {
    if (star || highest < 0)
      return make_error("--multi-prog: give -n (the file's '*' or no line says how many ranks)");
    ntasks = highest + 1;
  }
  // Each rank's line and its offset there.
  std::vector<int> line_of(static_cast<size_t>(ntasks), -1), offset(static_cast<size_t>(ntasks));
  for (size_t l = 0; l < lines.size(); ++l) {
    if (!rank_lists[l]) continue;
    int at = 0;
    for (int r : *rank_lists[l]) {
      if (r >= ntasks)
        return make_error(cat("--multi-prog: line ", lines[l].number, " names rank ", r,
                              ", but the launch has ", ntasks, " ranks"));
      auto& mine = line_of[static_cast<size_t>(r)];
      if (mine >= 0)
        return make_error(cat("--multi-prog: rank ", r, " is on lines ",
                              lines[static_cast<size_t>(mine)].number, " and ", lines[l].number));
      mine = static_cast<int>(l);
      offset[static_cast<size_t>(r)] = at++;
    }
  }
  for (size_t l = 0, at = 0; l < lines.size(); ++l) {
    if (rank_lists[l]) continue;
    for (int r = 0; r < ntasks; ++r)
      if (line_of[static_cast<size_t>(r)] < 0)
        line_of[static_cast<size_t>(r)] = static_cast<int>(l),
        offset[static_cast<size_t>(r)] = static_cast<int>(at++);
  }
  std::vector<App> apps;
  for (int r = 0; r < ntasks; ++r) {
    int l = line_of[static_cast<size_t>(r)];
    if (l < 0) return make_error(cat("--multi-prog: no line names rank ", r));
    std::vector<std::string> command;
    for (const auto& word : lines[static_cast<size_t>(l)].command)
      command.push_back(substitute(word, r, offset[static_cast<size_t>(r)]));
    if (!apps.empty() && apps.back().program == command.front() &&
        apps.back().args == std::vector<std::string>(command.begin() + 1, command.end())) {
      ++apps.back().ntasks;
      continue;
    }
    apps.push_back(App{1, {}, command.front(), {command.begin() + 1, command.end()}});
  }
  return apps;
}

Result<std::vector<App>> parse_configfile(std::string_view text) {
  std::vector<App> apps;
  size_t number = 0;
  for (const auto& raw : split(text, '\n')) {
    ++number;
    auto words = words_of(raw, number);
    if (!words) return make_error(cat("-configfile: ", words.error().message));
    if (words->empty()) continue;
    auto segment = parse_segment(*words, apps.size() + 1);
    if (!segment)
      return make_error(cat("-configfile: line ", number, ": ", segment.error().message));
    if (segment->app.program.empty())
      return make_error(cat("-configfile: line ", number, ": no program"));
    apps.push_back(std::move(segment->app));
    if (apps.size() > static_cast<size_t>(kMaxRanks))
      return make_error("-configfile: too many segments");
  }
  if (apps.empty()) return make_error("-configfile: no segment in the file");
  long total = 0;
  for (const auto& app : apps) total += app.segment_ranks();
  if (total > kMaxRanks) return make_error(cat("-configfile: more than ", kMaxRanks, " ranks"));
  return apps;
}

Status use_program_file(LaunchOptions& o, std::string_view text) {
  const App& given = o.apps.front();
  auto apps = o.multi_prog ? parse_multi_prog(text, given.ntasks) : parse_configfile(text);
  if (!apps) return apps.error();
  if (!o.multi_prog && given.ntasks)
    return make_error("-configfile: each line gives its segment's -n, not the command line");
  // The command line's --env (add_global_env put -genv's there) for every app.
  o.global_env = given.env;
  o.apps = std::move(apps.value());
  o.add_global_env();
  return {};
}

}  // namespace lattice::launcher
