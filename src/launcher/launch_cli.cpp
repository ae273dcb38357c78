// `lattice launch`'s command line through CLI11: our options, srun's spellings as aliases of
// them, mpiexec's single-dash ones (mpiexec_spellings), and MPMD segments after lone ':'s.
#include <cmath>
#include <functional>

#include "base/command_line.hpp"
#include "base/hostlist.hpp"
#include "base/strings.hpp"
#include "config/config.hpp"
#include "launcher/mpiexec_spellings.hpp"
#include "launcher/options.hpp"
#include "launcher/output_files.hpp"
#include "proc/cpu_binding.hpp"
#include "proc/gpus.hpp"

namespace lattice::launcher {
namespace {

constexpr int kMaxCount = 1 << 20;
constexpr size_t kMaxNodes = 1 << 20;  // names in -w/-x, as in the launch's host lists

// A count as the launch's options take it: "-n: expected a whole number from 1 to ...".
CLI::Option* count(Options& w, const std::string& names, int max, std::function<void(int)> set) {
  return w.value(
      names, [max, set = std::move(set)](const std::string& flag, const std::string& v) -> Status {
        auto n = parse_count(flag, v, max);
        if (!n) return n.error();
        set(*n);
        return {};
      });
}

// -o/-e (and mpiexec's -outfile-pattern/-errfile-pattern, translated): a pattern of our %t %n %j.
Status output_pattern(const std::string& flag, const std::string& v, std::string& target) {
  if (auto checked = expand_output_pattern(v, 0, 0, "id"); !checked || v.empty())
    return make_error(cat(flag, ": ", checked ? "needs a file name" : checked.error().message));
  target = v;
  return {};
}

Status host_list(const std::string& flag, const std::string& v, std::string& target) {
  auto list = HostList::parse(v, kMaxNodes);
  if (!list || list->size() == 0)
    return make_error(
        cat(flag, ": expected node ids as a Slurm host list (n[1-4],m2), got '", v, "'"));
  target = v;
  return {};
}

// Options given at all, whatever their value (--mem 0 is still --mem).
struct Given {
  bool mem = false, mem_per_cpu = false;
};

// The launch's own options (the first segment's -n and --env are its app's).
void wire_launch(Options& w, LaunchOptions& o, Given& given) {
  App& app = o.apps.front();
  count(w, "-n,--ntasks,--np", kMaxCount, [&app](int n) { app.ntasks = n; });
  count(w, "-N,--nodes", kMaxCount, [&o](int n) { o.nodes = n; });
  count(w, "--ntasks-per-node,--ppn,--npernode,--tasks-per-node", kMaxCount,
        [&o](int n) { o.tasks_per_node = n; });
  count(w, "--fanout", static_cast<int>(config::kMaxFanout),
        [&o](int n) { o.fanout = static_cast<uint32_t>(n); });
  w.value("-t,--time", [&o](const std::string& flag, const std::string& v) -> Status {
    auto ms = parse_time_limit(v);
    if (!ms) return make_error(cat(flag, ": ", ms.error().message));
    o.time_limit_ms = *ms;
    return {};
  });
  // srun's form: the value is optional and only ever attached (-K0, --kill-on-bad-exit=0).
  w.value("-K,--kill-on-bad-exit",
          [&o](const std::string& flag, const std::string& v) -> Status {
            if (v != "0" && v != "1") return make_error(cat(flag, ": 0 or 1, got '", v, "'"));
            o.kill_on_bad_exit = v == "1";
            return {};
          })
      ->expected(0, 1)
      ->default_str("1");
  w.value("--cpu-bind", [&o](const std::string& flag, const std::string& v) -> Status {
    auto bind = proc::parse_cpu_bind(v);
    if (!bind) return bind.error();
    o.cpu_bind = std::move(bind.value());
    o.cpu_bind_given = true;
    return {};
  });
  w.value("-c,--cpus-per-task", [&o](const std::string&, const std::string& v) -> Status {
    auto n = proc::parse_cpus_per_task(v);
    if (!n) return n.error();
    o.cpus_per_task = *n;
    return {};
  });
  w.value("--gpus-per-task", [&o](const std::string&, const std::string& v) -> Status {
    auto n = proc::parse_gpu_count("--gpus-per-task", v);
    if (!n) return n.error();
    o.gpus.per_task = *n;
    return {};
  });
  w.value("--gpus-per-node", [&o](const std::string&, const std::string& v) -> Status {
    auto n = proc::parse_gpu_count("--gpus-per-node", v);
    if (!n) return n.error();
    o.gpus.per_node = *n;
    return {};
  });
  w.value("--gpu-bind", [&o](const std::string&, const std::string& v) -> Status {
    return proc::parse_gpu_bind(v, o.gpus);
  });
  w.value("--mem", [&o, &given](const std::string&, const std::string& v) -> Status {
    auto bytes = parse_launch_memory("--mem", v);
    if (!bytes) return bytes.error();
    o.memory_bytes = *bytes;
    given.mem = true;
    return {};
  });
  w.value("--mem-per-cpu", [&o, &given](const std::string&, const std::string& v) -> Status {
    auto bytes = parse_launch_memory("--mem-per-cpu", v);
    if (!bytes) return bytes.error();
    o.memory_per_cpu = *bytes;
    given.mem_per_cpu = true;
    return {};
  });
  w.value("--sched", [&o](const std::string& flag, const std::string& v) -> Status {
    if (v != "auto" && v != "batch" && v != "normal")
      return make_error(cat(flag, ": auto, normal or batch, got '", v, "'"));
    o.sched = v;
    return {};
  });
  w.value("--launch", [&o](const std::string& flag, const std::string& v) -> Status {
    if (v != "auto" && v != "star" && v != "tree")
      return make_error(cat(flag, ": auto, star or tree, got '", v, "'"));
    o.launch = v;
    return {};
  });
  w.value("-i,--stdin,--input", [&o](const std::string& flag, const std::string& v) -> Status {
    if (v == "none" || v == "all") {
      o.input_rank = v == "none" ? kInputNone : kInputAll;
      return {};
    }
    auto rank = parse_int(v);
    if (!rank || *rank < 0 || *rank >= kMaxCount)
      return make_error(cat(flag, ": none, all or a rank number, got '", v, "'"));
    o.input_rank = static_cast<int>(*rank);
    return {};
  });
  count(w, "--vni", 65535, [&o](int n) { o.vni = static_cast<uint32_t>(n); });
  w.value("--fabric-url", [&o](const std::string& flag, const std::string& v) -> Status {
    if (!starts_with(v, "http://") && !starts_with(v, "https://"))
      return make_error(cat(flag, ": expected an http:// or https:// URL, got '", v, "'"));
    o.fabric_url = v;
    return {};
  });
  w.text("--fabric-token-file", o.fabric_token_file);
  w.text("--config", o.config_file);
  w.text("--alloc", o.alloc);
  w.text("-D,--wdir,--chdir", o.chdir);
  w.text("-J,--job-name", o.job_name);
  w.text("--key-file", o.key_file);
  w.text("--uid,--user", o.user);
  w.text("--export", o.exports);
  w.text("--envlist", o.exports);
  w.flag("--genvall", [&o] { o.exports = "ALL"; });
  w.flag("--genvnone", [&o] { o.exports = "NONE"; });
  w.value("-o,--output", [&o](const std::string& flag, const std::string& v) {
    return output_pattern(flag, v, o.output);
  });
  w.value("-e,--error", [&o](const std::string& flag, const std::string& v) {
    return output_pattern(flag, v, o.error);
  });
  w.value("--outfile-pattern", [&o](const std::string& flag, const std::string& v) {
    return output_pattern(flag, hydra_pattern(v), o.output);
  });
  w.value("--errfile-pattern", [&o](const std::string& flag, const std::string& v) {
    return output_pattern(flag, hydra_pattern(v), o.error);
  });
  w.value("--signal", [&o](const std::string&, const std::string& v) -> Status {
    auto warn = parse_warn_signal(v);
    if (!warn) return warn.error();
    o.warn_signal = warn->signal;
    o.warn_before_ms = warn->before_ms;
    return {};
  });
  w.value("--open-mode", [&o](const std::string&, const std::string& v) -> Status {
    auto append = parse_open_mode(v);
    if (!append) return append.error();
    o.append_output = *append;
    return {};
  });
  w.value("--distribution", [&o](const std::string& flag, const std::string& v) -> Status {
    if (v != "block" && v != "cyclic")
      return make_error(cat(flag, ": block or cyclic, got '", v, "'"));
    o.distribution = v == "block" ? Distribution::block : Distribution::cyclic;
    return {};
  });
  w.value("--map-by", [&o](const std::string& flag, const std::string& v) -> Status {
    auto d = parse_map_by(v);
    if (!d) return d.error();
    o.distribution = *d;
    return {};
  });
  w.value("--bind-to", [&o](const std::string& flag, const std::string& v) -> Status {
    auto bind = parse_bind_to(v);
    if (!bind) return bind.error();
    o.cpu_bind = std::move(bind.value());
    o.cpu_bind_given = true;
    return {};
  });
  w.value("--env", [&app](const std::string& flag, const std::string& v) -> Status {
    auto kv = parse_env(flag, v);
    if (!kv) return kv.error();
    app.env.push_back(std::move(kv.value()));
    return {};
  });
  w.value("--genv", [&o](const std::string& flag, const std::string& v) -> Status {
    auto kv = parse_env(flag, v);
    if (!kv) return kv.error();
    o.global_env.push_back(std::move(kv.value()));
    return {};
  });
  w.value("--pmi,--mpi", [&o](const std::string& flag, const std::string& v) -> Status {
    auto mode = parse_pmi(v);
    if (!mode) return mode.error();
    o.pmi = *mode;
    return {};
  });
  w.value("--fence-timeout", [&o](const std::string& flag, const std::string& v) -> Status {
    char* end = nullptr;
    double secs = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(secs > 0) || secs > 86400 * 7)
      return make_error(cat(flag, ": expected seconds > 0, got '", v, "'"));
    o.fence_timeout_ms = static_cast<uint32_t>(std::ceil(secs * 1000));
    return {};
  });
  w.value("--agents", [&o](const std::string& flag, const std::string& v) -> Status {
    auto agents = parse_agents(v);
    if (!agents) return agents.error();
    o.agents.insert(o.agents.end(), agents->begin(), agents->end());
    return {};
  });
  w.value("-w,-H,--hosts,--host,--nodelist", [&o](const std::string& flag, const std::string& v) {
    return host_list(flag, v, o.nodelist);
  });
  w.value("-x,--exclude", [&o](const std::string& flag, const std::string& v) {
    return host_list(flag, v, o.exclude);
  });
  w.text("-f,--machinefile,--hostfile", o.hostfile);
  w.text("--app,--configfile", o.configfile);
  w.flag("-l,--prepend-rank,--tag-output,--label", [&o] { o.label = true; });
  w.flag("--slurm-compat", [&o] { o.slurm_compat = true; });
  w.flag("--pmi-port", [&o] { o.pmi_port = true; });
  w.flag("-v,--verbose", [&o] { o.verbose = true; });
  w.flag("-u,--unbuffered", [&o] { o.unbuffered = true; });
  w.flag("-Q,--quiet", [&o] { o.quiet = true; });
  w.flag("--multi-prog", [&o] { o.multi_prog = true; });
  w.flag("--exclusive", [&o] { o.exclusive = true; });
}

// What the whole command line must hold together.
Status check_launch(const LaunchOptions& o, const Given& given) {
  if (given.mem && given.mem_per_cpu)
    return make_error("--mem and --mem-per-cpu are mutually exclusive");
  if (auto gpus = proc::check_gpu_request(o.gpus); !gpus) return gpus.error();
  long total = 0;
  for (const auto& app : o.apps) total += app.segment_ranks();
  if (total > kMaxCount)
    return make_error(cat("the segments ask for more than ", kMaxCount, " ranks"));
  for (size_t i = 0; i < o.agents.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (!o.agents[i].name.empty() && o.agents[i].name == o.agents[j].name)
        return make_error(cat("--agents: node id '", o.agents[i].name, "' is given twice"));
  if (o.launch == "tree")
    for (const auto& agent : o.agents)
      if (agent.name.empty())
        return make_error(
            cat("--launch tree: the launcher reaches only the head agent, so every "
                "agent's node id must be given (NAME=HOST:PORT); ",
                agent.address.host, ':', agent.address.port, " has none"));
  if (!o.agents.empty() && o.nodes > static_cast<int>(o.agents.size()))
    return make_error(
        cat("-N ", o.nodes, " asks for more nodes than the ", o.agents.size(), " agents given"));
  if (!o.nodelist.empty() && !o.hostfile.empty())
    return make_error("-w/-hosts and -f: give the nodes one way");
  if (o.multi_prog && (o.apps.size() > 1 || !o.apps.front().args.empty()))
    return make_error(
        "--multi-prog: PROGRAM is its file, which gives every rank's program and arguments");
  if (!o.configfile.empty() && (o.multi_prog || !o.apps.front().program.empty()))
    return make_error("-configfile: the file gives the programs; give none on the command line");
  return {};
}

}  // namespace

Result<Segment> parse_segment(const std::vector<std::string>& words, size_t segment) {
  Segment out;
  App& app = out.app;
  CLI::App cli;
  Options w(cli);
  count(w, "-n,--ntasks,--np", kMaxCount, [&app](int n) { app.ntasks = n; });
  w.value("--env", [&app](const std::string& flag, const std::string& v) -> Status {
    auto kv = parse_env(flag, v);
    if (!kv) return kv.error();
    app.env.push_back(std::move(kv.value()));
    return {};
  });
  CommandLineRules rules;
  rules.single_dash = kSegmentSpellings;
  rules.on_unknown = [segment](const std::string& arg) {
    return make_error(cat("'", arg, "' in segment ", segment,
                          ": a segment takes only -n and --env (give launch options before the "
                          "first program)"));
  };
  auto line = w.parse(words, rules);
  if (!line) return line.error();
  if (line->help) return make_error(cat("--help in segment ", segment));
  if (!line->dashdash && !line->rest.empty() && line->rest.front() == "-")
    return make_error(cat("unknown option '-' in segment ", segment));
  if (!line->rest.empty()) {
    out.has_program = true;
    app.program = line->rest.front();
    app.args.assign(line->rest.begin() + 1, line->rest.end());
  }
  return out;
}

Result<LaunchOptions> parse_launch_options(const std::vector<std::string>& argv) {
  // mpiexec's MPMD form: a lone ':' starts another segment (so no program gets ':' as an
  // argument).
  std::vector<std::vector<std::string>> segments(1);
  for (const auto& arg : argv)
    if (arg == ":")
      segments.emplace_back();
    else
      segments.back().push_back(arg);

  LaunchOptions o;
  o.apps.emplace_back();
  CLI::App cli;
  Options w(cli);
  Given given;
  wire_launch(w, o, given);
  auto line = w.parse(segments.front(), {kMpiexecSpellings, {}, nullptr});
  if (!line) return line.error();
  if (line->help) {
    o.help = true;
    return o;
  }
  if (!line->dashdash && !line->rest.empty() && line->rest.front() == "-")
    return make_error("unknown option '-'");
  // Each segment's program, left to right, as the errors were always found.
  auto has_program = [&](size_t i, bool named, const std::string& program) -> Status {
    const size_t n = i + 1;
    const bool last = n == segments.size();
    if (!named && !last) return make_error(cat("':' with no program before it (segment ", n, ")"));
    if (named && !program.empty()) return {};
    if (n == 1) return o.configfile.empty() ? make_error("no program given") : Status{};
    return make_error(
        cat("no program given after ", last ? "the last ':'" : "a ':'", " (segment ", n, ")"));
  };
  if (!line->rest.empty()) {
    o.apps.front().program = line->rest.front();
    o.apps.front().args.assign(line->rest.begin() + 1, line->rest.end());
  }
  if (auto ok = has_program(0, !line->rest.empty(), o.apps.front().program); !ok) return ok.error();
  for (size_t i = 1; i < segments.size(); ++i) {
    auto segment = parse_segment(segments[i], i + 1);
    if (!segment) return segment.error();
    if (auto ok = has_program(i, segment->has_program, segment->app.program); !ok)
      return ok.error();
    o.apps.push_back(std::move(segment->app));
  }
  if (auto checked = check_launch(o, given); !checked) return checked.error();
  o.add_global_env();
  return o;
}

}  // namespace lattice::launcher
