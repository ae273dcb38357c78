#include "launcher/srun_front.hpp"

#include <doctest/doctest.h>

using namespace lattice::launcher;
using Args = std::vector<std::string>;

namespace {

// The translation of `srun ARGS ./app`, without the --slurm-compat head and the "-- ./app" tail
// every translation has (checked below).
Args options_of(Args srun) {
  srun.push_back("./app");
  auto out = translate_srun(srun);
  REQUIRE_MESSAGE(out, (out ? "" : out.error().message));
  REQUIRE(out->size() >= 3);
  CHECK(out->front() == "--slurm-compat");
  CHECK((*out)[out->size() - 2] == "--");
  CHECK(out->back() == "./app");
  return Args(out->begin() + 1, out->end() - 2);
}

std::string error_of(const Args& srun) {
  auto out = translate_srun(srun);
  REQUIRE_MESSAGE(!out, "translated, but an error was expected");
  return out.error().message;
}

}  // namespace

TEST_CASE("srun front: the program and its arguments pass untouched") {
  auto out = translate_srun(Args{"-n", "2", "./app", "-n", "5", "--mem", "1G", "-"});
  REQUIRE(out);
  CHECK(*out == Args{"--slurm-compat", "--ntasks=2", "--", "./app", "-n", "5", "--mem", "1G", "-"});
  // After "--" even a program named like an option.
  out = translate_srun(Args{"-l", "--", "-odd", "--label"});
  REQUIRE(out);
  CHECK(*out == Args{"--slurm-compat", "--label", "--", "-odd", "--label"});
  CHECK(*translate_srun(Args{"hostname"}) == Args{"--slurm-compat", "--", "hostname"});
  // A value that reads as an option or as "--" stays attached to its option.
  CHECK(options_of({"-D", "--"}) == Args{"--chdir=--"});
  CHECK(options_of({"-D--", "-e", "-x"}) == Args{"--chdir=--", "--error=-x"});
}

TEST_CASE("srun front: counts, in every spelling") {
  CHECK(options_of({"-n", "4"}) == Args{"--ntasks=4"});
  CHECK(options_of({"-n4"}) == Args{"--ntasks=4"});
  CHECK(options_of({"--ntasks", "4"}) == Args{"--ntasks=4"});
  CHECK(options_of({"--ntasks=4"}) == Args{"--ntasks=4"});
  CHECK(options_of({"-N2"}) == Args{"--nodes=2"});
  CHECK(options_of({"--nodes=2"}) == Args{"--nodes=2"});
  CHECK(options_of({"--ntasks-per-node=3"}) == Args{"--tasks-per-node=3"});
  CHECK(options_of({"--tasks-per-node", "3"}) == Args{"--tasks-per-node=3"});
}

TEST_CASE("srun front: the options lattice launch shares") {
  CHECK(options_of({"-l"}) == Args{"--label"});
  CHECK(options_of({"--label"}) == Args{"--label"});
  CHECK(options_of({"-o", "out.%t"}) == Args{"--output=out.%t"});
  CHECK(options_of({"-oout.%t"}) == Args{"--output=out.%t"});
  CHECK(options_of({"--error=err.%j"}) == Args{"--error=err.%j"});
  CHECK(options_of({"-e", "err"}) == Args{"--error=err"});
  CHECK(options_of({"-i", "all"}) == Args{"--input=all"});
  CHECK(options_of({"--input=none"}) == Args{"--input=none"});
  CHECK(options_of({"-t10"}) == Args{"--time=10"});
  CHECK(options_of({"--time", "1-02:00:00"}) == Args{"--time=1-02:00:00"});
  CHECK(options_of({"--export=ALL,FOO=bar"}) == Args{"--export=ALL,FOO=bar"});
  CHECK(options_of({"-D", "/tmp"}) == Args{"--chdir=/tmp"});
  CHECK(options_of({"--chdir=/tmp"}) == Args{"--chdir=/tmp"});
  CHECK(options_of({"--jobid=1234"}) == Args{"--alloc=1234"});
  CHECK(options_of({"--uid", "alice"}) == Args{"--user=alice"});
  CHECK(options_of({"-v"}) == Args{"--verbose"});
  CHECK(options_of({"--verbose"}) == Args{"--verbose"});
}

TEST_CASE("srun front: memory and exclusivity") {
  CHECK(options_of({"--mem", "64M"}) == Args{"--mem=64M"});
  CHECK(options_of({"--mem=0"}) == Args{"--mem=0"});
  CHECK(options_of({"--mem-per-cpu=2G"}) == Args{"--mem-per-cpu=2G"});
  CHECK(options_of({"--exclusive"}) == Args{"--exclusive"});
  CHECK(error_of({"--mem=64M", "--mem-per-cpu=1G", "./app"}) ==
        "--mem and --mem-per-cpu are mutually exclusive");
  CHECK(error_of({"--mem=lots", "./app"}) ==
        "--mem: expected a size such as 512M or 4G, got 'lots'");
}

TEST_CASE("srun front: -K's value only ever attached") {
  CHECK(options_of({"-K"}) == Args{"--kill-on-bad-exit"});
  CHECK(options_of({"-K0"}) == Args{"--kill-on-bad-exit=0"});
  CHECK(options_of({"--kill-on-bad-exit=1"}) == Args{"--kill-on-bad-exit=1"});
  CHECK(options_of({"--kill-on-bad-exit"}) == Args{"--kill-on-bad-exit"});
  // Detached, "0" is the program, as srun reads it.
  CHECK(*translate_srun(Args{"-K", "0"}) ==
        Args{"--slurm-compat", "--kill-on-bad-exit", "--", "0"});
  CHECK(error_of({"-K2", "./app"}) == "--kill-on-bad-exit: 0 or 1, got '2'");
}

TEST_CASE("srun front: short letters bundle as getopt allows") {
  CHECK(options_of({"-lv"}) == Args{"--label", "--verbose"});
  CHECK(options_of({"-ln4"}) == Args{"--label", "--ntasks=4"});
  CHECK(options_of({"-ln", "4"}) == Args{"--label", "--ntasks=4"});
  CHECK(options_of({"-vv"}) == Args{"--verbose", "--verbose"});
  CHECK(options_of({"-lK0"}) == Args{"--label", "--kill-on-bad-exit=0"});
}

TEST_CASE("srun front: -N takes one count, not a range") {
  CHECK(error_of({"-N", "2-4", "./app"}) ==
        "-N 2-4: a range of node counts is not supported (lattice launch runs on exactly N "
        "nodes); give one number");
  CHECK(error_of({"--nodes=2-4", "./app"}).rfind("--nodes 2-4: a range", 0) == 0);
}

TEST_CASE("srun front: -m's node level only") {
  CHECK(options_of({"-m", "cyclic"}) == Args{"--distribution=cyclic"});
  CHECK(options_of({"--distribution=block"}) == Args{"--distribution=block"});
  CHECK(options_of({"-m", "cyclic:*:*"}) == Args{"--distribution=cyclic"});
  CHECK(options_of({"-m", "*"}).empty());
  CHECK(error_of({"-m", "block:cyclic", "./app"}) ==
        "-m block:cyclic: ':cyclic' is not supported (lattice launch places ranks on nodes, not "
        "on sockets or cores); give block alone");
  CHECK(error_of({"--distribution=cyclic,Pack", "./app"}).find("Pack and NoPack") !=
        std::string::npos);
  CHECK(error_of({"-m", "plane=4", "./app"}) ==
        "-m plane=4: 'plane=4' is not supported (lattice launch distributes block or cyclic)");
  CHECK(error_of({"-m", "arbitrary", "./app"}).find("'arbitrary' is not supported") !=
        std::string::npos);
}

TEST_CASE("srun front: --cpu-bind without srun's verbose and quiet") {
  CHECK(options_of({"--cpu-bind=cores"}) == Args{"--cpu-bind=cores"});
  CHECK(options_of({"--cpu-bind", "verbose,sockets"}) == Args{"--cpu-bind=sockets"});
  CHECK(options_of({"--cpu_bind=v,map_cpu:0,2"}) == Args{"--cpu-bind=map_cpu:0,2"});
  CHECK(options_of({"--cpu-bind=quiet,none"}) == Args{"--cpu-bind=none"});
  CHECK(options_of({"--cpu-bind=verbose"}).empty());
  CHECK(options_of({"--cpu-bind=v,mask_cpu:0x3,0xc"}) == Args{"--cpu-bind=mask_cpu:0x3,0xc"});
  CHECK(options_of({"--cpu-bind=threads"}) == Args{"--cpu-bind=threads"});
  CHECK(options_of({"--cpu-bind=ldoms"}) == Args{"--cpu-bind=ldoms"});
  // What lattice cannot bind to, its own check names.
  CHECK(error_of({"--cpu-bind=map_ldom:0", "./app"}).find("map_ldom") != std::string::npos);
}

TEST_CASE("srun front: CPUs and GPUs per task") {
  CHECK(options_of({"-c", "4"}) == Args{"--cpus-per-task=4"});
  CHECK(options_of({"-c4"}) == Args{"--cpus-per-task=4"});
  CHECK(options_of({"-lc2"}) == Args{"--label", "--cpus-per-task=2"});
  CHECK(options_of({"--cpus-per-task=2"}) == Args{"--cpus-per-task=2"});
  CHECK(options_of({"--gpus-per-task=1"}) == Args{"--gpus-per-task=1"});
  CHECK(options_of({"--gpus-per-node", "2"}) == Args{"--gpus-per-node=2"});
  CHECK(options_of({"--gpus-per-task=1", "--gpu-bind=verbose,closest"}) ==
        Args{"--gpus-per-task=1", "--gpu-bind=closest"});
  CHECK(options_of({"--gpu-bind=map_gpu:1,0"}) == Args{"--gpu-bind=map_gpu:1,0"});
  CHECK(error_of({"-c", "0", "./app"}).find("--cpus-per-task") != std::string::npos);
  CHECK(error_of({"--gpu-bind=single:1", "--gpus-per-task=1", "./app"}).find("single:1") !=
        std::string::npos);
}

TEST_CASE("srun front: --mpi") {
  for (const char* pmix : {"pmix", "pmix_v2", "pmix_v3", "pmix_v4", "pmix_v5"})
    CHECK(options_of({std::string("--mpi=") + pmix}) == Args{"--pmi=pmix"});
  CHECK(options_of({"--mpi", "pmi2"}) == Args{"--pmi=pmi2"});
  CHECK(options_of({"--mpi=none"}).empty());
  CHECK(error_of({"--mpi=cray_shasta", "./app"}) ==
        "--mpi=cray_shasta is not supported (lattice launch serves pmix, pmix_v2 to pmix_v5, "
        "pmi2 and none)");
}

TEST_CASE("srun front: accepted and ignored where lattice already behaves so") {
  CHECK(options_of({"-J", "name"}).empty());
  CHECK(options_of({"--job-name=name"}).empty());
  CHECK(options_of({"-Jname", "-Q", "-X", "--overlap"}).empty());
  CHECK(options_of({"--quiet", "--disable-status"}).empty());
  CHECK(options_of({"-u", "--open-mode=append", "--signal=USR1@60"}) ==
        Args{"--unbuffered", "--open-mode=append", "--signal=USR1@60"});
  CHECK(options_of({"--propagate"}).empty());
  CHECK(options_of({"--propagate=ALL"}).empty());
  CHECK(error_of({"--propagate=STACK", "./app"}) ==
        "--propagate=STACK is not supported (lattice launch passes all of its soft limits)");
}

TEST_CASE("srun front: what lattice cannot do is refused, naming the option and why") {
  CHECK(error_of({"--mem-per-gpu", "1G", "./app"}) ==
        "--mem-per-gpu is not supported (lattice launch limits memory per node (--mem) or per CPU "
        "(--mem-per-cpu), not per GPU)");
  CHECK(error_of({"--gpus-per-socket=1", "./app"}) ==
        "--gpus-per-socket is not supported (lattice launch gives ranks GPUs by "
        "--gpus-per-task, --gpus-per-node and --gpu-bind alone)");
  CHECK(error_of({"-G", "2", "./app"}).rfind("-G is not supported", 0) == 0);
  CHECK(error_of({"-w", "n[1-2]", "./app"}) ==
        "-w is not supported (lattice launch cannot pick nodes by name)");
  CHECK(error_of({"--exclude=n1", "./app"}).rfind("--exclude is not supported", 0) == 0);
  CHECK(error_of({"--exclusive=user", "./app"}) ==
        "--exclusive=user is not supported (it shapes a new allocation; lattice-srun runs inside "
        "one)");
  CHECK(error_of({"--multi-prog", "conf"}).rfind("--multi-prog is not supported", 0) == 0);
  CHECK(error_of({"-p", "debug", "./app"}).rfind("-p is not supported (it shapes a new", 0) == 0);
  // In a bundle, the refused letter is named.
  CHECK(error_of({"-lG4", "./app"}).rfind("-G is not supported", 0) == 0);
}

TEST_CASE("srun front: unknown options, with a suggestion when one is near") {
  CHECK(error_of({"--foo", "./app"}) == "unknown option '--foo'");
  CHECK(error_of({"--ntask=2", "./app"}) == "unknown option '--ntask' (did you mean '--ntasks'?)");
  CHECK(error_of({"--lable", "./app"}) == "unknown option '--lable' (did you mean '--label'?)");
  CHECK(error_of({"--cpubind=cores", "./app"}) ==
        "unknown option '--cpubind' (did you mean '--cpu-bind'?)");
  CHECK(error_of({"--nodelists", "n1", "./app"}) ==
        "unknown option '--nodelists' (did you mean '--nodelist'?)");
  CHECK(error_of({"-y", "./app"}) == "unknown option '-y'");
}

TEST_CASE("srun front: values missing or unwanted, no program, ':'") {
  CHECK(error_of({"-n"}) == "-n needs a value");
  CHECK(error_of({"--ntasks"}) == "--ntasks needs a value");
  CHECK(error_of({"--label=1", "./app"}) == "--label takes no value");
  CHECK(error_of({}) == "no program given");
  CHECK(error_of({"-n", "2"}) == "no program given");
  CHECK(error_of({"-n", "2", "--"}) == "no program given");
  CHECK(error_of({"./a", ":", "./b"}).rfind("':' (a heterogeneous step) is not supported", 0) == 0);
  CHECK(error_of({"--help", "./app"}) == "--help must come alone: lattice-srun --help");
  CHECK(error_of({"-l", "-V"}) == "-V must come alone: lattice-srun -V");
}

TEST_CASE("srun front: values lattice launch refuses fail here, before any exec") {
  CHECK(error_of({"-n", "0", "./app"}).rfind("--ntasks: expected a whole number", 0) == 0);
  CHECK(error_of({"-t", "soon", "./app"}).rfind("--time: expected MM", 0) == 0);
  CHECK(error_of({"-o", "out.%x", "./app"}).rfind("--output: ", 0) == 0);
  CHECK(error_of({"-i", "in.txt", "./app"}) == "--input: none, all or a rank number, got 'in.txt'");
}
