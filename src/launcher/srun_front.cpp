#include "launcher/srun_front.hpp"

#include <algorithm>
#include <string_view>

#include "base/strings.hpp"
#include "base/suggest.hpp"
#include "launcher/options.hpp"

namespace lattice::launcher {

const char* const kSrunUsage =
    "usage: lattice-srun [options] PROGRAM [ARGS...]   (srun's front for `lattice launch`)\n"
    "  -n, --ntasks N             -N, --nodes N (no ranges)   --ntasks-per-node N\n"
    "  -l, --label                -o, --output PATTERN        -e, --error PATTERN\n"
    "  -i, --input none|all|RANK  -t, --time LIMIT            -K, --kill-on-bad-exit[=0|1]\n"
    "  -D, --chdir DIR            --export ALL|NONE|NAMES     --jobid ID (lattice's --alloc)\n"
    "  -m, --distribution block|cyclic (no ':' levels but '*')\n"
    "  --cpu-bind [verbose,]none|threads|cores|sockets|ldoms|map_cpu:LIST|mask_cpu:LIST\n"
    "  -c, --cpus-per-task N      --gpus-per-task N           --gpus-per-node N\n"
    "  --gpu-bind [verbose,]closest|none|map_gpu:LIST\n"
    "  --mpi pmix|pmix_v2..v5|pmi2|none           --uid USER (lattice's --user)\n"
    "  -v, --verbose (lattice's timing breakdown)  -u, --unbuffered   --open-mode append|truncate\n"
    "  --signal SIG[@SECONDS]     --mem SIZE                  --mem-per-cpu SIZE\n"
    "  --exclusive\n"
    "  accepted, as lattice already behaves so: -J/--job-name, -Q/--quiet,\n"
    "  -X/--disable-status, --overlap, --propagate[=ALL]\n"
    "Any other srun option is refused, naming it. Ranks get SLURM_* variables (--slurm-compat).\n"
    "See lattice-srun(1).\n";

namespace {

enum class Takes { nothing, value, optional_value };  // optional: only attached (=V, -K0)
enum class Does { rename, ignore, refuse, special };

struct SrunOption {
  std::string_view name;  // the long name, without "--"
  char letter;            // the short one; 0: none
  Takes takes;
  Does does;
  // rename: lattice launch's option; refuse: why (after "not supported"); else unused.
  std::string_view text;
};

// Why lattice launch cannot do what an option asks, shared by the options that ask alike.
constexpr std::string_view kNewAllocation =
    "it shapes a new allocation; lattice-srun runs inside one";
constexpr std::string_view kNodeChoice = "lattice launch does not choose nodes by their features";
constexpr std::string_view kCpuShare =
    "lattice launch does not share out CPUs to ranks or launches; --cpu-bind binds ranks";
constexpr std::string_view kGpus =
    "lattice launch gives ranks GPUs by --gpus-per-task, --gpus-per-node and --gpu-bind alone";
constexpr std::string_view kMemory =
    "lattice launch limits memory per node (--mem) or per CPU (--mem-per-cpu), not per GPU";
constexpr std::string_view kNoCounterpart = "lattice launch has no counterpart";
constexpr std::string_view kCopies = "lattice launch copies no files to the nodes";
constexpr std::string_view kScripts = "lattice launch runs no prolog or epilog scripts";

// srun's options (Slurm 23.x/24.x), alphabetically. Every one is here, so that none is taken for
// a typo and every refusal says why.
constexpr SrunOption kOptions[] = {
    {"accel-bind", 0, Takes::value, Does::refuse, kGpus},
    {"account", 'A', Takes::value, Does::refuse, kNewAllocation},
    {"acctg-freq", 0, Takes::value, Does::refuse, "lattice launch keeps no accounting"},
    {"bb", 0, Takes::value, Does::refuse, kNewAllocation},
    {"bbf", 0, Takes::value, Does::refuse, kNewAllocation},
    {"bcast", 0, Takes::optional_value, Does::refuse, kCopies},
    {"bcast-exclude", 0, Takes::value, Does::refuse, kCopies},
    {"begin", 'b', Takes::value, Does::refuse, kNewAllocation},
    {"chdir", 'D', Takes::value, Does::rename, "--chdir"},
    {"cluster-constraint", 0, Takes::value, Does::refuse, kNewAllocation},
    {"clusters", 'M', Takes::value, Does::refuse, kNewAllocation},
    {"comment", 0, Takes::value, Does::refuse, kNewAllocation},
    {"compress", 0, Takes::optional_value, Does::refuse, kCopies},
    {"constraint", 'C', Takes::value, Does::refuse, kNodeChoice},
    {"container", 0, Takes::value, Does::refuse, "lattice launch runs no containers"},
    {"container-id", 0, Takes::value, Does::refuse, "lattice launch runs no containers"},
    {"contiguous", 0, Takes::nothing, Does::refuse, kNodeChoice},
    {"core-spec", 'S', Takes::value, Does::refuse, kCpuShare},
    {"cores-per-socket", 0, Takes::value, Does::refuse, kNodeChoice},
    {"cpu-bind", 0, Takes::value, Does::special, {}},
    {"cpu-freq", 0, Takes::value, Does::refuse, "lattice launch does not set CPU frequencies"},
    {"cpu_bind", 0, Takes::value, Does::special, {}},
    {"cpus-per-gpu", 0, Takes::value, Does::refuse, kGpus},
    {"cpus-per-task", 'c', Takes::value, Does::rename, "--cpus-per-task"},
    {"deadline", 0, Takes::value, Does::refuse, kNewAllocation},
    {"debugger-test", 0, Takes::nothing, Does::refuse, kNoCounterpart},
    {"delay-boot", 0, Takes::value, Does::refuse, kNewAllocation},
    {"dependency", 'd', Takes::value, Does::refuse, kNewAllocation},
    {"disable-status", 'X', Takes::nothing, Does::ignore, {}},
    {"distribution", 'm', Takes::value, Does::special, {}},
    {"epilog", 0, Takes::value, Does::refuse, kScripts},
    {"error", 'e', Takes::value, Does::rename, "--error"},
    {"exact", 0, Takes::nothing, Does::refuse, kCpuShare},
    {"exclude", 'x', Takes::value, Does::refuse, "lattice launch cannot leave nodes out by name"},
    {"exclusive", 0, Takes::optional_value, Does::special, {}},
    {"export", 0, Takes::value, Does::rename, "--export"},
    {"external-launcher", 0, Takes::nothing, Does::refuse, kNoCounterpart},
    {"extra-node-info", 'B', Takes::value, Does::refuse, kNodeChoice},
    {"gid", 0, Takes::value, Does::refuse, "lattice launch runs ranks in their user's group"},
    {"gpu-bind", 0, Takes::value, Does::special, {}},
    {"gpu-freq", 0, Takes::value, Does::refuse, kGpus},
    {"gpus", 'G', Takes::value, Does::refuse, kGpus},
    {"gpus-per-node", 0, Takes::value, Does::rename, "--gpus-per-node"},
    {"gpus-per-socket", 0, Takes::value, Does::refuse, kGpus},
    {"gpus-per-task", 0, Takes::value, Does::rename, "--gpus-per-task"},
    {"gres", 0, Takes::value, Does::refuse, kGpus},
    {"gres-flags", 0, Takes::value, Does::refuse, kGpus},
    {"help", 'h', Takes::nothing, Does::special, {}},
    {"het-group", 0, Takes::value, Does::refuse, "lattice launch has no heterogeneous jobs"},
    {"hint", 0, Takes::value, Does::refuse, kCpuShare},
    {"hold", 'H', Takes::nothing, Does::refuse, kNewAllocation},
    {"immediate", 'I', Takes::optional_value, Does::refuse, kNewAllocation},
    {"input", 'i', Takes::value, Does::rename, "--input"},
    {"job-name", 'J', Takes::value, Does::ignore, {}},
    {"jobid", 0, Takes::value, Does::rename, "--alloc"},
    {"kill-on-bad-exit", 'K', Takes::optional_value, Does::special, {}},
    {"label", 'l', Takes::nothing, Does::rename, "--label"},
    {"launch-cmd", 0, Takes::nothing, Does::refuse, kNoCounterpart},
    {"launcher-opts", 0, Takes::value, Does::refuse, kNoCounterpart},
    {"licenses", 'L', Takes::value, Does::refuse, kNewAllocation},
    {"mail-type", 0, Takes::value, Does::refuse, kNewAllocation},
    {"mail-user", 0, Takes::value, Does::refuse, kNewAllocation},
    {"mcs-label", 0, Takes::value, Does::refuse, kNewAllocation},
    {"mem", 0, Takes::value, Does::rename, "--mem"},
    {"mem-bind", 0, Takes::value, Does::refuse, "lattice launch does not bind memory"},
    {"mem-per-cpu", 0, Takes::value, Does::rename, "--mem-per-cpu"},
    {"mem-per-gpu", 0, Takes::value, Does::refuse, kMemory},
    {"mem_bind", 0, Takes::value, Does::refuse, "lattice launch does not bind memory"},
    {"mincpus", 0, Takes::value, Does::refuse, kNodeChoice},
    {"mpi", 0, Takes::value, Does::special, {}},
    {"mpi-combine", 0, Takes::value, Does::refuse, "lattice launch has no heterogeneous jobs"},
    {"msg-timeout", 0, Takes::value, Does::refuse, kNoCounterpart},
    {"multi-prog", 0, Takes::nothing, Does::refuse,
     "lattice launch has no per-rank configuration file; use its MPMD form: "
     "lattice launch -n 1 PROG : -n 3 PROG2"},
    {"network", 0, Takes::value, Does::refuse, kNoCounterpart},
    {"nice", 0, Takes::optional_value, Does::refuse, kNewAllocation},
    {"no-allocate", 'Z', Takes::nothing, Does::refuse, kNewAllocation},
    {"no-kill", 'k', Takes::optional_value, Does::refuse,
     "a failed node ends a lattice launch everywhere"},
    {"nodefile", 'F', Takes::value, Does::refuse, "lattice launch cannot pick nodes by name"},
    {"nodelist", 'w', Takes::value, Does::refuse, "lattice launch cannot pick nodes by name"},
    {"nodes", 'N', Takes::value, Does::special, {}},
    {"ntasks", 'n', Takes::value, Does::rename, "--ntasks"},
    {"ntasks-per-core", 0, Takes::value, Does::refuse, kCpuShare},
    {"ntasks-per-gpu", 0, Takes::value, Does::refuse, kGpus},
    {"ntasks-per-node", 0, Takes::value, Does::rename, "--tasks-per-node"},
    {"ntasks-per-socket", 0, Takes::value, Does::refuse, kCpuShare},
    {"open-mode", 0, Takes::value, Does::rename, "--open-mode"},
    {"output", 'o', Takes::value, Does::rename, "--output"},
    {"overcommit", 'O', Takes::nothing, Does::refuse, kCpuShare},
    {"overlap", 0, Takes::nothing, Does::ignore, {}},
    {"oversubscribe", 's', Takes::nothing, Does::refuse, kCpuShare},
    {"partition", 'p', Takes::value, Does::refuse, kNewAllocation},
    {"power", 0, Takes::value, Does::refuse, kNewAllocation},
    {"prefer", 0, Takes::value, Does::refuse, kNodeChoice},
    {"priority", 0, Takes::value, Does::refuse, kNewAllocation},
    {"profile", 0, Takes::value, Does::refuse, "lattice launch keeps no accounting"},
    {"prolog", 0, Takes::value, Does::refuse, kScripts},
    {"propagate", 0, Takes::optional_value, Does::special, {}},
    {"pty", 0, Takes::optional_value, Does::refuse, "lattice launch gives ranks no terminal"},
    {"qos", 'q', Takes::value, Does::refuse, kNewAllocation},
    {"quiet", 'Q', Takes::nothing, Does::ignore, {}},
    {"quit-on-interrupt", 0, Takes::nothing, Does::refuse,
     "lattice launch forwards the first SIGINT to the ranks"},
    {"reboot", 0, Takes::nothing, Does::refuse, kNewAllocation},
    {"relative", 'r', Takes::value, Does::refuse, "lattice launch cannot pick nodes by name"},
    {"reservation", 0, Takes::value, Does::refuse, kNewAllocation},
    {"resv-ports", 0, Takes::optional_value, Does::refuse, kNoCounterpart},
    {"segment", 0, Takes::value, Does::refuse, kNodeChoice},
    {"send-libs", 0, Takes::optional_value, Does::refuse, kCopies},
    {"signal", 0, Takes::value, Does::rename, "--signal"},
    {"slurmd-debug", 0, Takes::value, Does::refuse, kNoCounterpart},
    {"sockets-per-node", 0, Takes::value, Does::refuse, kNodeChoice},
    {"spread-job", 0, Takes::nothing, Does::refuse, kNodeChoice},
    {"switches", 0, Takes::value, Does::refuse, kNodeChoice},
    {"task-epilog", 0, Takes::value, Does::refuse, kScripts},
    {"task-prolog", 0, Takes::value, Does::refuse, kScripts},
    {"tasks-per-node", 0, Takes::value, Does::rename, "--tasks-per-node"},
    {"test-only", 0, Takes::nothing, Does::refuse, kNewAllocation},
    {"thread-spec", 0, Takes::value, Does::refuse, kCpuShare},
    {"threads", 'T', Takes::value, Does::refuse, kNoCounterpart},
    {"threads-per-core", 0, Takes::value, Does::refuse, kNodeChoice},
    {"time", 't', Takes::value, Does::rename, "--time"},
    {"time-min", 0, Takes::value, Does::refuse, kNewAllocation},
    {"tmp", 0, Takes::value, Does::refuse, kNodeChoice},
    {"tres-bind", 0, Takes::value, Does::refuse, kGpus},
    {"tres-per-task", 0, Takes::value, Does::refuse, kGpus},
    {"uid", 0, Takes::value, Does::rename, "--user"},
    {"unbuffered", 'u', Takes::nothing, Does::rename, "--unbuffered"},
    {"usage", 0, Takes::nothing, Does::special, {}},
    {"use-min-nodes", 0, Takes::nothing, Does::refuse, kNodeChoice},
    {"verbose", 'v', Takes::nothing, Does::rename, "--verbose"},
    {"version", 'V', Takes::nothing, Does::special, {}},
    {"wait", 'W', Takes::value, Does::refuse,
     "lattice launch does not end the other ranks a while after the first exits"},
    {"wckey", 0, Takes::value, Does::refuse, kNewAllocation},
    {"x11", 0, Takes::optional_value, Does::refuse, "lattice launch forwards no X11"},
};

const SrunOption* by_name(std::string_view name) {
  for (const auto& o : kOptions)
    if (o.name == name) return &o;
  return nullptr;
}

const SrunOption* by_letter(char letter) {
  for (const auto& o : kOptions)
    if (o.letter == letter) return &o;
  return nullptr;
}

Error unknown_long(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& o : kOptions) names.emplace_back(o.name);
  std::string message = cat("unknown option '--", name, "'");
  if (auto nearest = closest(name, names)) message += cat(" (did you mean '--", *nearest, "'?)");
  return make_error(message);
}

// srun's -m: NODES[:SOCKETS[:CORES]][,Pack|NoPack]. Lattice places ranks on nodes only, so the
// levels within a node are refused unless they are '*' (srun's default), not dropped: dropping
// them would bind ranks elsewhere than the script asked without a word.
Status distribution(const std::string& spelled, const std::string& value,
                    std::vector<std::string>& out) {
  auto levels = split(value, ':');
  if (value.find(',') != std::string::npos)
    return make_error(cat(spelled, " ", value,
                          ": Pack and NoPack are not supported (lattice launch places ranks "
                          "by --distribution alone)"));
  for (size_t i = 1; i < levels.size(); ++i)
    if (levels[i] != "*")
      return make_error(cat(spelled, " ", value, ": ':", levels[i],
                            "' is not supported (lattice launch places ranks on nodes, not on "
                            "sockets or cores); give ",
                            levels[0], " alone"));
  if (levels[0] == "*") return {};  // srun's default, and lattice's: block
  if (levels[0] != "block" && levels[0] != "cyclic")
    return make_error(cat(spelled, " ", value, ": '", levels[0],
                          "' is not supported (lattice launch distributes block or cyclic)"));
  out.push_back("--distribution=" + levels[0]);
  return {};
}

// srun's --cpu-bind takes "verbose" or "quiet" (or v, q) among its items; they only say
// whether srun prints each task's mask, so they are stripped. The rest goes to lattice launch,
// whose check (proc::parse_cpu_bind) names anything it cannot do.
void cpu_bind(const std::string& value, std::vector<std::string>& out) {
  std::vector<std::string> kept;
  for (const auto& item : split(value, ','))
    if (item != "verbose" && item != "v" && item != "quiet" && item != "q") kept.push_back(item);
  if (!kept.empty()) out.push_back("--cpu-bind=" + join(kept, ","));
}

// srun's --mpi: the PMIx plugins -> lattice's PMIx tier; pmi2 -> its PMI-2; none -> nothing:
// lattice launch's --pmi auto gives every program what it links, which a program that does not
// use PMI never notices.
Status mpi(const std::string& value, std::vector<std::string>& out) {
  if (value == "pmix" || value == "pmix_v2" || value == "pmix_v3" || value == "pmix_v4" ||
      value == "pmix_v5")
    out.emplace_back("--pmi=pmix");
  else if (value == "pmi2")
    out.emplace_back("--pmi=pmi2");
  else if (value != "none")
    return make_error(cat("--mpi=", value,
                          " is not supported (lattice launch serves pmix, pmix_v2 to pmix_v5, "
                          "pmi2 and none)"));
  return {};
}

// One option, as given (`spelled`: -n or --ntasks, for messages), with its value if it has one.
Status apply(const SrunOption& o, const std::string& spelled, const std::string* value,
             std::vector<std::string>& out) {
  switch (o.does) {
    case Does::refuse:
      return make_error(cat(spelled, " is not supported (", o.text, ")"));
    case Does::ignore:
      return {};
    case Does::rename:
      out.push_back(value ? cat(o.text, '=', *value) : std::string(o.text));
      return {};
    case Does::special:
      break;
  }
  if (o.name == "nodes") {
    // srun's MIN-MAX lets Slurm pick a count; lattice launch runs on exactly N nodes, and
    // picking one for the script would be a guess.
    if (value->find('-') != std::string::npos)
      return make_error(cat(spelled, " ", *value,
                            ": a range of node counts is not supported (lattice launch runs on "
                            "exactly N nodes); give one number"));
    out.push_back("--nodes=" + *value);
  } else if (o.name == "distribution") {
    return distribution(spelled, *value, out);
  } else if (o.name == "cpu-bind" || o.name == "cpu_bind") {
    cpu_bind(*value, out);
  } else if (o.name == "gpu-bind") {
    // Only "verbose," (srun prints the binding) is dropped; the rest is lattice launch's to judge.
    std::string_view bind = *value;
    if (starts_with(bind, "verbose,")) bind.remove_prefix(8);
    out.push_back(cat("--gpu-bind=", bind));
  } else if (o.name == "mpi") {
    return mpi(*value, out);
  } else if (o.name == "exclusive") {
    // A step's --exclusive (the node's CPUs to itself); =user and =mcs shape an allocation.
    if (value)
      return make_error(cat("--exclusive=", *value, " is not supported (", kNewAllocation, ")"));
    out.emplace_back("--exclusive");
  } else if (o.name == "kill-on-bad-exit") {
    out.push_back(value ? "--kill-on-bad-exit=" + *value : "--kill-on-bad-exit");
  } else if (o.name == "propagate") {
    // lattice launch passes every soft limit of its own to the ranks: srun's default, ALL.
    if (value && *value != "ALL")
      return make_error(cat("--propagate=", *value,
                            " is not supported (lattice launch passes all of its soft limits)"));
  } else {  // help, usage, version: main() answers them as the first argument
    return make_error(cat(spelled, " must come alone: lattice-srun ", spelled));
  }
  return {};
}

// args[i] is "--NAME" or "--NAME=VALUE"; a value of its own may take args[i + 1] (i advances).
Status long_option(const std::vector<std::string>& args, size_t& i, std::vector<std::string>& out) {
  std::string name = args[i].substr(2), value;
  bool attached = false;
  if (auto eq = name.find('='); eq != std::string::npos) {
    value = name.substr(eq + 1);
    name.resize(eq);
    attached = true;
  }
  const SrunOption* o = by_name(name);
  if (!o) return unknown_long(name);
  const std::string spelled = "--" + name;
  if (o->does == Does::refuse) return apply(*o, spelled, nullptr, out);
  if (o->takes == Takes::nothing && attached) return make_error(cat(spelled, " takes no value"));
  if (o->takes == Takes::value && !attached) {
    if (i + 1 >= args.size()) return make_error(cat(spelled, " needs a value"));
    value = args[++i];
    attached = true;
  }
  return apply(*o, spelled, attached ? &value : nullptr, out);
}

// args[i] is "-X...": letters bundled as getopt allows (-lv), the last maybe with its value
// attached (-n4, -K0) or, when it needs one, in args[i + 1].
Status short_options(const std::vector<std::string>& args, size_t& i,
                     std::vector<std::string>& out) {
  const std::string& arg = args[i];
  for (size_t j = 1; j < arg.size(); ++j) {
    const SrunOption* o = by_letter(arg[j]);
    const std::string spelled = cat('-', arg[j]);
    if (!o) return make_error(cat("unknown option '", spelled, "'"));
    if (o->does == Does::refuse) return apply(*o, spelled, nullptr, out);
    if (o->takes == Takes::nothing) {
      if (auto ok = apply(*o, spelled, nullptr, out); !ok) return ok;
      continue;
    }
    std::string value = arg.substr(j + 1);
    bool has_value = !value.empty();
    if (o->takes == Takes::value && !has_value) {
      if (i + 1 >= args.size()) return make_error(cat(spelled, " needs a value"));
      value = args[++i];
      has_value = true;
    }
    return apply(*o, spelled, has_value ? &value : nullptr, out);
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> translate_srun(const std::vector<std::string>& srun_args) {
  // SLURM_PROCID and the rest: what a script written for srun expects its tasks to see.
  std::vector<std::string> out{"--slurm-compat"};
  size_t i = 0;
  // srun stops at its first non-option argument (getopt's '+'): the program.
  for (; i < srun_args.size(); ++i) {
    const std::string& arg = srun_args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;
    auto ok =
        starts_with(arg, "--") ? long_option(srun_args, i, out) : short_options(srun_args, i, out);
    if (!ok) return ok.error();
  }
  if (i >= srun_args.size()) return make_error("no program given");
  // To srun a lone ':' starts another component of a heterogeneous step, to lattice launch an
  // MPMD segment with its own -n: neither would get the ':' as an argument, and the two differ.
  for (size_t j = i; j < srun_args.size(); ++j)
    if (srun_args[j] == ":")
      return make_error(
          "':' (a heterogeneous step) is not supported (lattice launch reads ':' as the start "
          "of an MPMD segment, which takes only -n and --env)");
  // "--" first: a program whose name starts with '-' stays the program.
  out.emplace_back("--");
  out.insert(out.end(), srun_args.begin() + static_cast<long>(i), srun_args.end());
  // lattice launch's own checks now, so a value it would refuse fails with srun's exit status.
  if (auto parsed = parse_launch_options(out); !parsed) return parsed.error();
  return out;
}

}  // namespace lattice::launcher
