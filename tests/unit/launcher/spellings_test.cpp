// srun's and mpiexec's spellings of `lattice launch`'s options: every alias parses to the same
// LaunchOptions as the option it stands for; one-line errors that name the nearest option.
#include <doctest/doctest.h>

#include "base/strings.hpp"
#include "launcher/admin_client.hpp"
#include "launcher/options.hpp"

using namespace lattice;
using namespace lattice::launcher;
using Args = std::vector<std::string>;

namespace {

std::string env_text(const std::vector<std::pair<std::string, std::string>>& env) {
  std::string out;
  for (const auto& [k, v] : env) out += cat(k, '=', v, ';');
  return out;
}

// Every field a spelling may set, as text, so that a difference shows which.
std::string describe(const LaunchOptions& o) {
  std::string out;
  for (const auto& app : o.apps) {
    out += cat("app{n=", app.ntasks, " env=", env_text(app.env), " ", app.program);
    for (const auto& a : app.args) out += cat(' ', a);
    out += "} ";
  }
  std::string map;
  for (int cpu : o.cpu_bind.map) map += cat(cpu, ',');
  out += cat("nodes=", o.nodes, " tpn=", o.tasks_per_node,
             " dist=", o.distribution == Distribution::block ? "block" : "cyclic",
             " label=", o.label, " pmi=", static_cast<int>(o.pmi), " exports=", o.exports,
             " bind=", static_cast<int>(o.cpu_bind.kind), ':', map, " chdir=", o.chdir,
             " name=", o.job_name, " quiet=", o.quiet, " w=", o.nodelist, " x=", o.exclude,
             " f=", o.hostfile, " out=", o.output, " err=", o.error, " cfg=", o.configfile,
             " multi=", o.multi_prog, " time=", o.time_limit_ms, " kill=", o.kill_on_bad_exit,
             " input=", o.input_rank, " verbose=", o.verbose, " user=", o.user);
  return out;
}

struct Alias {
  Args spelled;             // as srun or mpiexec users type it
  Args ours;                // the option it stands for
  bool is_default = false;  // what a launch does without either
};

}  // namespace

TEST_CASE("every alias parses as the option it stands for") {
  const Alias kAliases[] = {
      // mpiexec (Hydra)
      {{"-np", "4"}, {"-n", "4"}},
      {{"--np=4"}, {"--ntasks", "4"}},
      {{"-ppn", "2"}, {"--tasks-per-node", "2"}},
      {{"-hosts", "n1,n2"}, {"-w", "n1,n2"}},
      {{"-f", "hosts.txt"}, {"--hostfile", "hosts.txt"}},
      {{"-genv", "A", "1"}, {"--genv", "A=1"}},
      {{"-genv", "A", "x=y"}, {"--env", "A=x=y"}},  // one segment: its ranks get it
      {{"-env", "B", "2"}, {"--env", "B=2"}},
      {{"-genvall"}, {"--export", "ALL"}, true},
      {{"-genvnone"}, {"--export", "NONE"}},
      {{"-envlist", "A,B"}, {"--export", "A,B"}},
      {{"-bind-to", "core"}, {"--cpu-bind", "cores"}},
      {{"-bind-to", "socket"}, {"--cpu-bind", "sockets"}},
      {{"-bind-to", "hwthread"}, {"--cpu-bind", "threads"}},
      {{"-bind-to", "none"}, {"--cpu-bind", "none"}, true},
      {{"-map-by", "node"}, {"--distribution", "cyclic"}},
      {{"-map-by", "slot"}, {"--distribution", "block"}, true},
      {{"-map-by", "core"}, {"--distribution", "block"}, true},
      {{"-map-by", "socket"}, {"--distribution", "block"}, true},
      {{"-prepend-rank"}, {"-l"}},
      {{"-outfile-pattern", "out.%r"}, {"-o", "out.%t"}},
      {{"-errfile-pattern", "err.%r.%h"}, {"-e", "err.%t.%n"}},
      {{"-wdir", "/tmp"}, {"--chdir", "/tmp"}},
      {{"-host", "n1"}, {"-w", "n1"}},
      {{"-hostfile", "h"}, {"-f", "h"}},
      {{"-machinefile", "h"}, {"-f", "h"}},
      {{"-genvlist", "A"}, {"--export", "A"}},
      // mpirun (Open MPI)
      {{"--host", "n1,n2"}, {"-w", "n1,n2"}},
      {{"-H", "n1"}, {"-w", "n1"}},
      {{"--machinefile", "h"}, {"-f", "h"}},
      {{"--npernode", "2"}, {"--tasks-per-node", "2"}},
      {{"-npernode", "2"}, {"--tasks-per-node", "2"}},
      {{"--tag-output"}, {"-l"}},
      {{"--stdin", "all"}, {"-i", "all"}},
      {{"--map-by", "node"}, {"-map-by", "node"}},
      // srun
      {{"--uid", "u"}, {"--user", "u"}},
      {{"--ntasks-per-node", "2"}, {"--tasks-per-node", "2"}},
      {{"--ntasks-per-node=3"}, {"--tasks-per-node=3"}},
      {{"--mpi=pmix"}, {"--pmi", "pmix"}},
      {{"--mpi", "pmi2"}, {"--pmi", "pmi2"}, true},
      {{"--mpi=pmix_v3"}, {"--pmi", "pmix"}},
      {{"--mpi=pmix_v4"}, {"--pmi", "pmix"}},
      {{"--pmi=pmix_v4"}, {"--pmi", "pmix"}},
      {{"-D", "/tmp"}, {"--chdir", "/tmp"}},
      {{"-D/tmp"}, {"--chdir", "/tmp"}},
      {{"--chdir=/tmp"}, {"--chdir", "/tmp"}},
      {{"-J", "job"}, {"--job-name", "job"}},
      {{"--job-name=job"}, {"-J", "job"}},
      {{"-Q"}, {"--quiet"}},
      {{"-w", "n[1-2]"}, {"--nodelist", "n[1-2]"}},
      {{"--nodelist=n1"}, {"-w", "n1"}},
      {{"-x", "n3"}, {"--exclude", "n3"}},
      {{"-lQ"}, {"-l", "-Q"}},
      {{"-lv"}, {"--label", "--verbose"}},
      {{"-ln2"}, {"-l", "-n", "2"}},
      {{"-K"}, {"--kill-on-bad-exit"}, true},
      {{"-K0"}, {"--kill-on-bad-exit=0"}},
  };
  for (const auto& alias : kAliases) {
    Args spelled = alias.spelled, ours = alias.ours;
    spelled.push_back("./prog");
    ours.push_back("./prog");
    auto a = parse_launch_options(spelled);
    auto b = parse_launch_options(ours);
    std::string shown = cat(join(alias.spelled, " "), " vs ", join(alias.ours, " "));
    REQUIRE_MESSAGE(a, shown, ": ", a.error().message);
    REQUIRE_MESSAGE(b, shown, ": ", b.error().message);
    CHECK_MESSAGE(describe(*a) == describe(*b), shown);
    if (!alias.is_default)
      CHECK_MESSAGE(describe(*a) != describe(*parse_launch_options(Args{"./prog"})), shown,
                    ": changes nothing");
  }
}

TEST_CASE("-np N is N ranks, no longer -n with 'p'") {
  auto o = parse_launch_options(Args{"-np", "4", "-ppn", "2", "./a.out", "-np", "9"});
  REQUIRE_MESSAGE(o, o.error().message);
  CHECK(o->ntasks() == 4);
  CHECK(o->tasks_per_node == 2);
  CHECK(o->apps[0].args == Args{"-np", "9"});  // the program's own stay its own
}

TEST_CASE("mpiexec's spellings in MPMD segments, and -genv for all of them") {
  auto o = parse_launch_options(Args{"-genv", "G", "1", "-np", "1", "-env", "A", "x", "./a", ":",
                                     "-np", "2", "-env", "G", "mine", "./b"});
  REQUIRE_MESSAGE(o, o.error().message);
  REQUIRE(o->apps.size() == 2);
  CHECK(o->apps[0].env == std::vector<std::pair<std::string, std::string>>{{"G", "1"}, {"A", "x"}});
  CHECK(o->apps[1].ntasks == 2);
  CHECK(o->apps[1].env == std::vector<std::pair<std::string, std::string>>{{"G", "mine"}});
}

TEST_CASE("errors are one line and suggest the nearest option") {
  auto error = [](Args args) {
    args.push_back("./prog");
    auto o = parse_launch_options(args);
    REQUIRE_FALSE(o);
    CHECK(o.error().message.find('\n') == std::string::npos);
    return o.error().message;
  };
  CHECK(error({"--ntask", "2"}) == "unknown option '--ntask'; did you mean '--ntasks'?");
  CHECK(error({"--lable"}) == "unknown option '--lable'; did you mean '--label'?");
  CHECK(error({"--nodelst", "a"}) == "unknown option '--nodelst'; did you mean '--nodelist'?");
  CHECK(error({"--ntasks-per-nod=2"}) ==
        "unknown option '--ntasks-per-nod'; did you mean '--ntasks-per-node'?");
  CHECK(error({"-ppnn", "2"}) == "unknown option '-ppnn'; did you mean '-ppn'?");
  CHECK(error({"-genvnon"}) == "unknown option '-genvnon'; did you mean '-genvnone'?");
  CHECK(error({"--frobnicate"}) == "unknown option '--frobnicate'");
  CHECK(error({"-z"}) == "unknown option '-z'");
  CHECK(parse_launch_options(Args{"-np"}).error().message == "-np needs a value");
  CHECK(parse_launch_options(Args{"-genv", "A"}).error().message ==
        "-genv needs a name and a value");
  CHECK(error({"-np", "p"}) == "-np: expected a whole number from 1 to 1048576, got 'p'");
  CHECK(error({"--mpi=pmi3"}) == "--pmi: auto, pmi2 or pmix, got 'pmi3'");
  CHECK(error({"-bind-to", "board"}) == "--bind-to: core, socket, hwthread or none, got 'board'");
  CHECK(error({"-map-by", "ppr"}).find("--map-by: slot, node") == 0);
  CHECK(error({"-w", "n[3-1]"}).find("-w: expected node ids") == 0);
  CHECK(error({"-Q=1"}).find("unknown option") == 0);
  CHECK(error({"--quiet=1"}) == "--quiet takes no value");
  CHECK(error({"-J", ""}) == "-J needs a value");
}

TEST_CASE("--help anywhere among the options asks for the usage") {
  CHECK(parse_launch_options(Args{"--help"})->help);
  CHECK(parse_launch_options(Args{"-n", "2", "-h"})->help);
  auto program = parse_launch_options(Args{"./p", "--help"});  // the program's own
  REQUIRE(program);
  CHECK_FALSE(program->help);
}

TEST_CASE("--multi-prog and -configfile: the files are named, main reads them") {
  auto multi = parse_launch_options(Args{"-n", "4", "--multi-prog", "silly.conf"});
  REQUIRE_MESSAGE(multi, multi.error().message);
  CHECK(multi->multi_prog);
  CHECK(multi->apps[0].program == "silly.conf");
  CHECK_FALSE(parse_launch_options(Args{"--multi-prog", "silly.conf", "extra"}));
  auto cfg = parse_launch_options(Args{"-configfile", "mpmd.txt"});
  REQUIRE_MESSAGE(cfg, cfg.error().message);
  CHECK(cfg->configfile == "mpmd.txt");
  CHECK(parse_launch_options(Args{"--app", "mpmd.txt"})->configfile == "mpmd.txt");  // mpirun's
  CHECK_FALSE(parse_launch_options(Args{"-configfile", "mpmd.txt", "./a"}));
  CHECK_FALSE(parse_launch_options(Args{"-hosts", "a", "-f", "h", "./a"}));
}

TEST_CASE("lattice admin: --socket anywhere, the other words the request") {
  auto a = parse_admin_args(Args{"status", "--socket", "/s", "L1"});
  REQUIRE_MESSAGE(a, a.error().message);
  CHECK(a->socket == "/s");
  CHECK(a->request == "status L1");
  CHECK(parse_admin_args(Args{"--socket=/t", "allocations"})->socket == "/t");
  CHECK(parse_admin_args(Args{"-h"})->help);
  CHECK(parse_admin_args(Args{"status", "--json"})->request == "status-json");
  CHECK(parse_admin_args(Args{"--json", "status", "L1"})->request == "status-json L1");
  CHECK_FALSE(parse_admin_args(Args{"allocations", "--json"}));
  CHECK(parse_admin_args(Args{"status", "--sockt", "/s"}).error().message ==
        "unknown option '--sockt'; did you mean '--socket'?");
  CHECK(parse_admin_args(Args{"status", "--socket"}).error().message == "--socket needs a value");
}

TEST_CASE("lattice admin --agents: status only, with one launch id at most, and the key file") {
  auto a = parse_admin_args(Args{"--agents", "n1=h:1,h:2", "status", "--key-file", "/k", "L1"});
  REQUIRE_MESSAGE(a, a.error().message);
  CHECK(a->agents == "n1=h:1,h:2");
  CHECK(a->key_file == "/k");
  CHECK(a->launch_id == "L1");
  CHECK_FALSE(a->json);
  auto j = parse_admin_args(Args{"status", "--json", "--agents", "h:1"});
  REQUIRE_MESSAGE(j, j.error().message);
  CHECK(j->json);
  CHECK(j->launch_id.empty());
  CHECK(parse_admin_args(Args{"--agents", "h:1", "metrics"}).error().message ==
        "--agents goes with status only");
  CHECK(parse_admin_args(Args{"--agents", "h:1", "status", "L1", "L2"}).error().message ==
        "status takes one LAUNCH_ID");
  CHECK(parse_admin_args(Args{"--key-file", "/k", "status"}).error().message ==
        "--key-file goes with --agents");
}

TEST_CASE("-K takes its value only attached, whatever it looks like") {
  CHECK(parse_launch_options(Args{"-K", "-n", "2", "p"})->ntasks() == 2);
  CHECK(parse_launch_options(Args{"-lK0", "p"})->kill_on_bad_exit == false);
  CHECK(parse_launch_options(Args{"-K-n", "p"}).error().message == "-K: 0 or 1, got '-n'");
  CHECK(parse_launch_options(Args{"--kill-on-bad-exit=-n", "p"}).error().message ==
        "--kill-on-bad-exit: 0 or 1, got '-n'");
}
