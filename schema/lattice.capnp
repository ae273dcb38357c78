# Lattice wire schema: every message between launcher and agents, and between agents, travels
# inside one Envelope. The union discriminant is the method; requestId pairs a response with
# its request (0 = one-way notification).
@0xc1b7e3a0f4d25a91;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("lattice::schema");

enum RankScheduling {
  auto @0;    # SCHED_BATCH when a node has more ranks than CPUs for them, else as the agent
  normal @1;  # as the agent (SCHED_OTHER)
  batch @2;   # SCHED_BATCH: woken, a rank does not preempt what runs
}

enum PmiMode {
  pmi2 @0;   # the simple PMI server: PMI-1 and PMI-2 wires on one fd (MPICH, Slurm libpmi2)
  pmix @1;   # OpenPMIx server (Open MPI); an agent built without libpmix refuses it
  none @2;   # no PMI served and no PMI_* variables: an allocation's batch step (a shell script)
  auto @3;   # each agent chooses from what the programs link: PMIx for Open MPI (or libpmix),
             # PMI-1/PMI-2 for MPICH, both at once for what it cannot tell (a script, python3)
}

struct CxiCredentials {
  # The launch's Slingshot CXI service, as the fabric manager made it for the launcher. Travels
  # only over sealed links; agents hold the key in guarded memory and wipe it when the launch
  # ends. An empty authKey: the launch runs without CXI.
  vni @0 :UInt32;
  svcId @1 :UInt32;
  authKey @2 :Data;
}

struct PeerInfo {
  nodeId @0 :Text;   # the agent's node name (LATTICE_NODELIST entry)
  host @1 :Text;     # address other agents and the launcher reach it at
  port @2 :UInt16;
}

# The peers in a few bytes however many nodes there are, when their names and hosts are
# numbered (base/hostlist: "n[1-256]"); sent instead of LaunchProcessesRequest.peers.
struct PeerList {
  nodeIds @0 :Text;          # host list of the node ids, by node index
  hosts @1 :Text;            # host list of their hosts, as many
  ports @2 :List(UInt16);    # one for every node, or one per node
}

# Where the ranks run (wire/rank_layout), instead of LaunchProcessesRequest.rankNodes.
struct RankLayout {
  cyclic @0 :Bool;             # rank r on node r % nodes
  blocks @1 :List(NodeBlock);  # else: from node 0 and rank 0 on, in order
}

struct NodeBlock {
  nodes @0 :UInt32;            # this many consecutive nodes,
  ranksEach @1 :UInt32;        # each holding this many consecutive ranks
}

struct JobUser {
  # Who the ranks run as. An agent running as root becomes this user before exec; any other
  # agent runs only its own user's jobs.
  uid @0 :UInt32;
  gid @1 :UInt32;
  groups @2 :List(UInt32);       # supplementary groups, as the launcher resolved them (absent:
                                 # the node's own view, through initgroups)
  name @3 :Text;                 # must match this uid's passwd entry on every node
}

struct EnvVar {
  name @0 :Text;
  value @1 :Text;
}

# RFC0029's "setup application" data: what the launcher (lattice-api's role) collects for every
# node once per launch, and each agent applies before it spawns. `environment` is what --export
# harvested from the launcher's environment (explicit --env and --export NAME=VALUE values, in
# `env`, win over it; the same names are refused, except that a root job's agent leaves hooks
# out of it instead of refusing them: LaunchAccepted.envLeftOut). `vendor` is reserved for PMIx_server_setup_application's packed data
# (fabric and vendor plugins), for the agents' PMIx_server_setup_local_support; until that is
# wired, an agent refuses a request that carries any.
struct AppSetup {
  environment @0 :List(EnvVar);
  vendor @1 :Data;
}

# One program of an MPMD launch (mpiexec's ':' segments). Ranks are numbered through the apps in
# order: app i holds the `size` ranks after those of apps 0..i-1, and its index is their appnum.
struct Application {
  entrypoint @0 :Text;
  args @1 :List(Text);
  env @2 :List(EnvVar);          # this app's own variables, over the request's env
  size @3 :UInt32;
}

struct LaunchProcessesRequest {
  launchId @0 :Text;
  allocationId @1 :Text;
  entrypoint @2 :Text;           # program path (resolved on PATH by the agent when bare)
  args @3 :List(Text);           # argv[1..]
  tasksPerNode @4 :UInt32;       # block layout shorthand: ranks on this node when rankNodes is empty
  firstRank @5 :UInt32;          # block layout shorthand: first global rank on this node
  worldSize @6 :UInt32;
  env @7 :List(EnvVar);          # the ranks' environment (never the agent's); reserved names
                                 # (PMI_*, PMIX_*, LATTICE_*, FI_CXI_*) are refused, and so are
                                 # hooks for a root job (docs/security.md)
  pmiMode @8 :PmiMode;
  cxiCredentials @9 :CxiCredentials;
  peers @10 :List(PeerInfo);     # every node of the launch, by node index
  headNodeIndex @11 :UInt32;     # node of rank 0: root of the fence tree, decides aborts
  # Beyond the seed's fields:
  nodeIndex @12 :UInt32;         # which entry of peers the receiving agent is
  rankNodes @13 :List(UInt32);   # node index of every rank (length worldSize); empty = block
  fenceTimeoutMs @14 :UInt32;    # 0 = the agent's configured default
  slurmCompat @15 :Bool;         # also export SLURM_* variables (or the agent's config says so)
  workdir @16 :Text;             # ranks' working directory; empty = the agent's
  fanout @17 :UInt32;            # fence tree fanout; 0 = 8 (never an agent's own choice)
  usePmiPort @18 :Bool;          # ranks dial a per-launch loopback port (PMI_PORT + PMI_ID) instead of PMI_FD
  user @19 :JobUser;
  timeLimitMs @20 :UInt64;       # 0 = none; at the limit: SIGTERM, a grace, SIGKILL
  killOnBadExit @21 :Bool = true; # false (srun -K0): a rank's non-zero exit ends only that rank
  appSetup @22 :AppSetup;
  inputRank @23 :Int32;          # whose stdin the launcher's feeds (StdinChunk): a rank, -1 all,
                                 # -2 none; the others read /dev/null
  cpuBind @24 :CpuBinding;       # --cpu-bind, parsed once by the launcher. Was Text ("cores",
                                 # "map_cpu:LIST", ...) before: launcher and agents must be
                                 # the same version
  apps @25 :List(Application);   # MPMD: two or more programs; then entrypoint and args are
                                 # empty. Empty: one app, entrypoint + args, all the ranks
  # Compact forms, so that a request's size does not grow with the nodes (issue 11): used when
  # peers (resp. rankNodes) is empty.
  peerList @26 :PeerList;
  rankLayout @27 :RankLayout;
  rankScheduling @28 :RankScheduling;
  # A relayed launch (lattice launch --launch tree): the launcher sends only the head's request;
  # each agent sends its children in the fence tree theirs (this request with their nodeIndex)
  # and passes their answers and reports up to its parent, and the launcher's signals, stdin
  # and aborts down (docs/security.md, "Relayed launches").
  relayed @29 :Bool;
  launcherName @30 :Text;        # relayed: the launcher's handshake name (the head checks it
                                 # against its link); should the head be lost, a link proving
                                 # it may take the launch's reports directly
  inherit @31 :Inheritance;      # what ranks take from the launcher (absent: the agent's own)
  hatchCommand @32 :Bool;        # a command an allocation's MPI launcher runs on this node
                                 # through lattice-mpi-launcher (an orted, a Hydra proxy): it
                                 # gets what escape-hatch commands get (its own session files)
  unbuffered @33 :Bool;          # srun -u: ranks' output goes on as read, not line by line
  warnSignal @34 :WarnSignal;    # srun --signal: a signal this long before the time limit
  memoryBytes @35 :UInt64;       # --mem: memory for all the launch's processes on each node
                                 # together (its cgroup's limit); 0 = none
  memoryPerCpu @36 :UInt64;      # --mem-per-cpu: the same, times the CPUs its ranks on that
                                 # node use (local ranks x CPUs per task); 0 = none. At most one
                                 # of the two is given
  exclusive @37 :Bool;           # --exclusive: no other launch runs on its nodes while it does
  cpusPerTask @38 :UInt32;       # -c: CPUs of each rank's own (0: not given); a node whose
                                 # ranks x this exceed its usable CPUs refuses the launch
  gpus @39 :GpuRequest;          # GPUs per rank (absent: none asked for)
  spawnedBy @40 :SpawnParent;    # PMIx_Spawn's children: a launch of their own, started by the
                                 # launcher of the parent's launch (absent: not spawned)
  launcherSignature @41 :LaunchSignature;  # relayed, from a certified launcher: its signature,
                                 # which every node below the head checks (absent: unsigned)
}

# A certified launcher's signature over a relayed launch request (docs/protocol.md, "Launch
# signatures"): Ed25519 by its certificate's signing key over "LTCLNCH\x01" and the request's
# Cap'n Proto canonical form with nodeIndex 0 and `signature` null, so that the relays, which
# change only nodeIndex, cannot change what the launcher asked.
struct LaunchSignature {
  certificate @0 :Data;          # the launcher's, version 2 (it names launcherName)
  notAfter @1 :UInt64;           # Unix seconds: refused after it, and refused twice before it
  signature @2 :Data;            # 64 bytes
}

# Who spawned a launch (PMIx_Spawn, MPI_Comm_spawn). An agent starts such a launch only beside
# its parent's part on that node, as the parent's user, from the parent's launcher, and ends it
# when the parent's part ends there.
struct SpawnParent {
  launchId @0 :Text;
  rank @1 :UInt32;               # the parent's rank that called PMIx_Spawn
  family @2 :Text;               # the family's first launch, whose head serves the names and
                                 # collectives of every generation (empty: launchId)
}

# srun's --signal=SIG@SECONDS: `signal` to every rank `beforeMs` before the launch's time limit
# (at once when the limit is shorter); signal 0: none.
struct WarnSignal {
  signal @0 :Int32;
  beforeMs @1 :UInt64;
}

# GPUs per rank (proc/gpus.hpp): --gpus-per-task or --gpus-per-node, and --gpu-bind. A node
# that cannot meet it refuses the launch before any rank starts.
struct GpuRequest {
  perTask @0 :UInt32;
  perNode @1 :UInt32;
  bind @2 :GpuBindKind;
  map @3 :List(UInt32);          # mapGpu: places in the node's GPU list, by local rank
}

enum GpuBindKind {
  auto @0;     # with perTask each rank its own GPUs in order; with perNode every rank all
  none @1;     # every rank sees all the GPUs the launch takes on the node
  closest @2;  # GPUs on the rank's NUMA node first
  mapGpu @3;
}

# How each local rank is bound to CPUs (proc/cpu_binding.hpp): none (the default), round robin
# over the node's threads, cores, sockets or NUMA nodes by local rank (with cpusPerTask: those
# holding the rank's own CPUs), or to the CPUs of `cpus` or `masks` by local rank.
enum CpuBindKind {
  none @0;
  cores @1;
  sockets @2;
  mapCpu @3;
  threads @4;
  ldoms @5;
  maskCpu @6;
}

struct CpuBinding {
  kind @0 :CpuBindKind;
  cpus @1 :List(UInt32);         # mapCpu: CPU numbers, by local rank (round robin)
  masks @2 :List(List(UInt32));  # maskCpu: each mask's CPU numbers, by local rank (round robin)
}

# What ranks inherit from the launcher, as srun's tasks take its umask and resource limits
# (PropagateResourceLimits=ALL). Each agent applies the limits its configuration propagates,
# as soft limits capped by its own hard limits.
struct Inheritance {
  umask @0 :UInt16;
  limits @1 :List(ResourceLimit);
}

struct ResourceLimit {
  resource @0 :Resource;
  soft @1 :UInt64;               # 0xffffffffffffffff: unlimited
}

enum Resource {
  as @0;
  core @1;
  cpu @2;
  data @3;
  fsize @4;
  memlock @5;
  nofile @6;
  nproc @7;
  rss @8;
  stack @9;
}

struct LaunchAccepted {
  # Sent once the launch is validated and its sockets exist; ranks are spawned right after
  # (their pids arrive with their exits).
  nodeId @0 :Text;               # the agent's own node name (launchers given bare addresses learn it here)
  bindings @1 :List(Text);       # with --cpu-bind: "RANK:CPU,CPU,..." for each local rank
  repliedUs @2 :UInt64;          # microseconds from the request's arrival to this reply: with the
                                 # launcher's send and receive times it places the agent's clock
  stdinTaken @3 :Bool;           # this agent reports the stdin its ranks took (StdinTaken), so
                                 # the launcher may hold its stdin back until they take it
  envLeftOut @4 :List(Text);     # names of hooks (a root job's) this agent left out of
                                 # appSetup.environment
  unenforced @5 :Text;           # a limit the launch asked for (--mem) that nothing on this
                                 # node can keep, and why; empty: every one is kept
}

# Fence and abort messages name their sender's node index, but a receiver believes it only when
# the sealed link it came on belongs to that node (the handshake's identity): see docs/security.md.
struct PmiFence {
  # One chunk of an agent's contribution (its subtree's puts) to fence `epoch`, sent up the tree.
  launchId @0 :Text;
  epoch @1 :UInt64;
  fromNode @2 :UInt32;
  entries @3 :Data;              # packed (src/fence/kv_pack.hpp; a List of texts before version 2)
  chunkIndex @4 :UInt32;         # 0 .. chunkCount-1; chunks may arrive in any order
  chunkCount @5 :UInt32;
}

struct PmiFenceComplete {
  # One chunk of the merged store of fence `epoch`, sent down the tree and forwarded by each
  # agent as it arrives (failed: errorMessage set, no entries).
  launchId @0 :Text;
  epoch @1 :UInt64;
  entries @2 :Data;              # packed, as in PmiFence
  errorMessage @3 :Text;
  chunkIndex @4 :UInt32;
  chunkCount @5 :UInt32;
  fromNode @6 :UInt32;
}

enum FailureKind {
  # What happened; Failure's other fields say to whom and how (src/policy/failure.hpp).
  other @0;          # detail is the whole reason
  exited @1;         # a rank exited non-zero (exitCode) or was killed (signal)
  noFinalize @2;     # a rank exited 0 after PMI init without finalize
  abortCalled @3;    # a rank called PMI abort (detail: its message)
  pmiError @4;       # a rank broke the PMI protocol (detail)
  pmiLost @5;        # a rank dropped its PMI connection and lived on (detail)
  spawnFailed @6;    # a rank could not be started (detail)
  fenceTimeout @7;   # fence fenceEpoch did not complete within timeoutMs
  nodeLost @8;       # node `peer` was lost (detail)
  launcherLost @9;   # the launcher's link was lost (detail)
  agentStopping @10; # the agent on `node` got `signal`
  agentKilled @11;   # the agent got a second signal
  timeLimit @12;     # the launch reached its time limit (timeoutMs)
  interrupted @13;   # the user's `signal` came before the ranks on `node` started
  allocationEnded @14; # the allocation the launch ran in ended (detail: which, and why)
  outOfMemory @15;   # the out-of-memory killer killed a rank (signal), whose launch's memory
                     # limit on `node` was memoryLimit (0: none of its own)
}

struct Failure {
  # A launch's failure as fields, rendered as text only where a person reads it.
  kind @0 :FailureKind;
  detail @1 :Text;
  exitCode @2 :Int32;            # the job status it implies
  rank @3 :Int32;                # -1: not one rank's doing
  node @4 :Text;                 # node id where it happened ("" = the launcher)
  fenceEpoch @5 :UInt64;         # non-zero: a failure of this fence (report stragglers)
  signal @6 :Int32;
  exitCodeGiven @7 :Bool;
  timeoutMs @8 :UInt64;
  peer @9 :Text;
  memoryLimit @10 :UInt64;       # outOfMemory
  peerEnded @11 :Bool;           # nodeLost: `peer` ended the link itself (its report says why)
}

struct AbortProcesses {
  launchId @0 :Text;
  failure @1 :Failure;           # what began it, as seen where it happened
}

struct SignalProcesses {
  # Forward a signal (SIGINT, SIGTERM, ...) to every rank's process group of the launch.
  launchId @0 :Text;
  signal @1 :Int32;
}

enum OutputStream {
  stdout @0;
  stderr @1;
}

struct OutputChunk {
  launchId @0 :Text;
  rank @1 :UInt32;
  stream @2 :OutputStream;
  data @3 :Data;                 # whole lines only (a final unterminated line at EOF)
}

struct RankExit {
  launchId @0 :Text;
  rank @1 :UInt32;
  nodeIndex @2 :UInt32;
  exitCode @3 :Int32;
  signal @4 :Int32;              # 0 when the rank exited normally
  pid @5 :Int32;
  outOfMemory @6 :Bool;          # the out-of-memory killer sent the signal (SIGKILL)
  memoryLimit @7 :UInt64;        # then: the launch's memory limit on its node; 0: none of its own
}

struct LaunchTimings {
  # Microseconds since the agent received LaunchProcesses (0 = never happened).
  spawnedUs @0 :UInt64;          # last local rank spawned
  firstInitUs @1 :UInt64;        # first local rank's PMI init
  lastFinalizeUs @2 :UInt64;     # last local rank's PMI finalize
  exitedUs @3 :UInt64;           # last local rank exited
  fences @4 :List(FenceTimings); # this node's latest fences (at most 64), oldest first
  userKnownUs @5 :UInt64;        # the job's user looked up (a root agent, another user's job)
}

struct FenceTimings {
  # One fence on one node, microseconds since the agent received LaunchProcesses (0: not reached).
  epoch @0 :UInt64;
  enteredUs @1 :UInt64;          # the last local rank entered it
  reducedUs @2 :UInt64;          # the subtree's contributions were in and merged (sent up or down)
  storeUs @3 :UInt64;            # the whole merged store was in
  releasedUs @4 :UInt64;         # the local ranks had their answers
}

struct LaunchEnded {
  # Sent by an agent once every local rank of the launch has exited and been reaped.
  launchId @0 :Text;
  nodeIndex @1 :UInt32;
  failed @2 :Bool;
  failure @3 :Failure;           # the first failure this agent saw (when failed)
  timings @4 :LaunchTimings;
  stragglers @5 :List(Straggler); # after a fence timeout: this node's ranks that never entered it
  strays @6 :UInt32;             # processes the launch left behind here (a setsid, a double
                                 # fork), killed by the agent once its ranks had exited
}

struct Straggler {
  # A rank that never entered a fence that timed out, as its agent saw it then.
  rank @0 :UInt32;
  pmiState @1 :Text;             # "waiting", "initialized", ... (pmi::rank_state_name)
  lastCommand @2 :Text;          # its last PMI command; empty: none yet
  idleMs @3 :UInt64;             # since that command
}

# One rank's PMIx data fetched from the node that holds it (PMIx direct modex), agent to agent:
# a request to the rank's node, answered on the same link (an error response: why there is
# none). The asking node is the link's authenticated identity, never a field.
struct PmixModex {
  launchId @0 :Text;
  rank @1 :UInt32;               # whose data
  data @2 :Data;                 # the response: libpmix's blob for that rank
}

# PMIx events between the agents of a launch (docs/pmi-wire.md §7, events): an event a rank raised
# with a range beyond its node (PMIx_Notify_event), or a rank's abnormal end, sent by the
# source rank's node to every node the range covers, each of which hands it to libpmix for its
# own ranks. A rank's event goes as a notification; a rank's end as a call, answered (empty)
# once libpmix there has it. The sending node is the link's identity, and the source rank must
# be one of its ranks.
struct PmixEvent {
  launchId @0 :Text;
  code @1 :Int32;                # the PMIx status code of the event
  sourceRank @2 :UInt32;         # the rank that raised it (of the launch's namespace)
  range @3 :UInt8;               # pmix_data_range_t as raised
  info @4 :List(PmixInfo);       # what came with it (bounded; values of carried types only)
}

struct PmixInfo {
  key @0 :Text;
  pmixType @1 :UInt16;           # pmix_data_type_t of the value, restored on delivery
  value :union {
    flag @2 :Bool;
    integer @3 :Int64;
    text @4 :Text;
    procs @5 :List(PmixProc);    # one (PMIX_PROC) or an array of them
  }
}

struct PmixProc {
  nspace @0 :Text;
  rank @1 :UInt32;               # PMIx's own rank value (wildcard: 0xfffffffe)
}

# PMIx job control across a launch: the node of a rank that called PMIx_Job_control asks each
# node holding target ranks to act on its own ranks of the same launch (the link's node must be
# a node of the launch). The empty response says it was done.
enum PmixControlAction {
  signal @0;
  kill @1;
  terminate @2;
}

struct PmixControl {
  launchId @0 :Text;
  action @1 :PmixControlAction;
  signal @2 :Int32;              # for `signal`
  ranks @3 :List(UInt32);        # the targets among the node's ranks; empty: all of them
}

# The escape hatch (lattice-mpi-launcher): a command run on one node of a launch, as the launch's
# user, for an MPI launcher (mpiexec.hydra, Open MPI's mpirun) started inside it instead of ssh.
# The asking node is the link's authenticated identity; events are accepted only from the node
# that was asked.
struct RemoteExec {
  launchId @0 :Text;
  execId @1 :UInt64;             # the asking node's, echoed in every event
  command @2 :List(Text);        # joined with spaces and run by /bin/sh -c, as ssh does
}

struct RemoteExecEvent {
  launchId @0 :Text;
  execId @1 :UInt64;
  stream @2 :OutputStream;
  data @3 :Data;                 # output (any bytes, as they came)
  exited @4 :Bool;               # the last event: exitCode, signal, or error
  exitCode @5 :Int32;
  signal @6 :Int32;
  error @7 :Text;                # refused or not started (the client exits 255)
}

struct RemoteExecKill {          # the client went away: end the command
  launchId @0 :Text;
  execId @1 :UInt64;
}

# lattice-mpi-launcher -> its node's agent, over the launch's exec socket (local, SO_PEERCRED
# checked): the launch's token from the caller's environment, the node, the command.
struct ExecRequest {
  token @0 :Text;
  node @1 :Text;
  command @2 :List(Text);
}

# Name publishing (MPI_Publish_name / MPI_Lookup_name) across a launch: a request to the
# launch's head agent, which holds the names, answered on the same link (an error response:
# why not); the asker is the link's node.
enum NameOp {
  publish @0;
  unpublish @1;
  lookup @2;
}

struct PmiName {
  launchId @0 :Text;
  op @1 :NameOp;
  name @2 :Text;
  port @3 :Text;                 # publish: the port; the response to a lookup: the port found
  # PMIx (PMIx_Publish/Lookup/Unpublish, docs/pmi-wire.md §7); all unset for PMI-1/PMI-2,
  # whose names any rank may unpublish and whose lookups answer at once.
  pmix @4 :Bool;
  nspace @5 :Text;               # the asking proc; the head checks that its rank runs on the
  rank @6 :UInt32;               # asking link's node
  scope @7 :UInt8;               # who may see a published name, or where a lookup looks (NameScope)
  firstRead @8 :Bool;            # publish: the name is gone once a lookup has read it
  waitMs @9 :UInt32;             # lookup: wait up to this long for the name; 0 = answer at once
  value @10 :Data;               # PMIx, in place of port: the value published, or found (binary)
}

# PMIx_Connect / PMIx_Disconnect / a fence over some procs only, as one collective across the
# nodes hosting the procs: each such node's request to the launch's head agent, answered (all of
# them at once) when every one of those nodes has asked; an error response: why it cannot
# complete. The asker is the link's node.
enum PmixCollectiveKind {
  connect @0;
  disconnect @1;
  fence @2;
  groupConstruct @3;             # PMIx_Group_construct (RFC0003)
  groupDestruct @4;
}

struct PmixConnect {
  launchId @0 :Text;
  kind @1 :PmixCollectiveKind;
  procs @2 :List(PmixProc);      # the participants, as libpmix gave them
  data @3 :Data;                 # fence: this node's blob; the response: every node's, joined
                                 # (a group: its members' endpoint data, libpmix's own bytes)
  group @4 :Text;                # a group's name (groups only)
  contextId @5 :UInt64;          # the response to a group's construction: the id the head
                                 # assigned it, unique in the launch
}

# PMIx_Spawn (MPI_Comm_spawn) from a rank: its node asks the launch's head, which asks the
# launcher the launch came from; the launcher starts the children as a launch of their own on
# the parent's nodes (LaunchProcessesRequest.spawnedBy) and answers with its id once every
# node has accepted it (an error response: why not). The asking node is the link's.
struct PmixSpawn {
  launchId @0 :Text;             # the parent's launch
  rank @1 :UInt32;               # the rank that called PMIx_Spawn
  apps @2 :List(Application);    # entrypoint, args, env (the app's own), size (maxprocs)
  workdir @3 :Text;              # PMIX_WDIR (empty: the parent's)
  hosts @4 :List(Text);          # PMIX_HOST / "host": node ids to use (empty: all the parent's)
  childLaunchId @5 :Text;        # the response: the children's launch (namespace lattice.<id>)
  hostfiles @7 :List(Text);      # PMIX_HOSTFILE / "hostfile": files of node ids, read by the
                                 # launcher as the job's user (their hosts join `hosts`)
  childRankNodes @6 :List(UInt32); # the launcher's response: each child's node, as an index
                                 # into the nodes of the family's first launch (whose head
                                 # tells them: PmixFamily)
}

# The head of a launch to each of its nodes, before it answers a PMIx_Spawn: the children's
# layout, so that their ranks' data (direct modex) and their collectives with the parent's ranks
# (MPI_Comm_spawn's connect back) can be routed from any node of the parent. `launchId` is the
# family's first launch (SpawnParent.family): a later generation's layout goes from the node of
# its spawning launch's head to the first launch's head, which then tells every node. Only the
# head of `launchId` sends it to a node; the empty response says the node's libpmix knows the
# namespace.
struct PmixFamily {
  launchId @0 :Text;             # the family's first launch
  childLaunchId @1 :Text;
  rankNodes @2 :List(UInt32);    # each child's node, an index into launchId's nodes
}

# The launcher's stdin for a launch's input rank(s), in order; `eof` ends it. Accepted only from
# the launcher link the launch came on.
struct StdinChunk {
  launchId @0 :Text;
  data @1 :Data;
  eof @2 :Bool;
}

# Agent -> launcher: of the stdin this node received, `bytes` in all have been written into its
# input ranks' pipes (or dropped with a rank that is gone). The launcher sends at most a window
# beyond it, so a rank that reads slowly holds the launcher's stdin back instead of overflowing
# the agent.
struct StdinTaken {
  launchId @0 :Text;
  bytes @1 :UInt64;
  nodeIndex @2 :UInt32;          # the node whose ranks took it (a relayed launch's pass it up)
}

# A relayed launch: a node's answer to its request, or the loss of a node, passed up the fence
# tree to the launcher. Believed only from a child whose subtree holds nodeIndex.
struct NodeAnswer {
  launchId @0 :Text;
  nodeIndex @1 :UInt32;
  accepted @2 :LaunchAccepted;   # when error is empty
  error @3 :Text;                # it refused the request, or was lost (then `lost`)
  lost @4 :Bool;                 # its parent lost it (unreachable, or gone)
}

# An allocation (lattice-api's, or `lattice alloc`'s): nodes held for one user until it ends.
# Sent by a key holder (a launcher link) to every node of it, each its own nodeIndex; every node
# keeps it, contains everything launched in it, and ends it on its own at its time limit.
# Launches that name it (LaunchProcessesRequest.allocationId) run only on nodes that hold it,
# as its user; its user may launch in it without the key, through the agent's user door.
struct AllocationStart {
  allocationId @0 :Text;
  user @1 :JobUser;
  nodes @2 :List(PeerInfo);      # every node of it, by node index (the first runs the batch step)
  nodeIndex @3 :UInt32;          # which of them the receiving agent is
  timeLimitMs @4 :UInt64;        # 0 = none; counted by each node from this message's arrival
  cpus @5 :UInt32;               # CPUs it may use on this node; 0 = all the agent may use
  memoryBytes @6 :UInt64;        # memory for all its processes on this node; 0 = no limit
  gpus @7 :List(Text);           # the GPUs it holds on this node, where known
  cxiCredentials @8 :CxiCredentials;  # its CXI service, for every launch in it
  slurmCompat @9 :Bool;          # its launches also get SLURM_* variables
}

# The allocation ends: everything in it is killed on this node. From a key holder; a node also
# ends one on its own at its time limit, or when the link that started it is lost.
struct AllocationEnd {
  allocationId @0 :Text;
  reason @1 :Text;
}

# Agent -> the link that started the allocation: it ended on this node (why, and how many
# processes were still in it).
struct AllocationEnded {
  allocationId @0 :Text;
  nodeIndex @1 :UInt32;
  reason @2 :Text;
  timeLimit @3 :Bool;            # it reached its time limit here
  killed @4 :UInt32;             # processes still in it that were killed
}

# A request for an allocation's description: from its user on the user door (only its own), or a
# key holder; the response carries the same struct, filled.
struct AllocationInfo {
  allocationId @0 :Text;
  user @1 :JobUser;
  nodes @2 :List(PeerInfo);
  nodeIndex @3 :UInt32;          # which of them the answering agent is
  remainingMs @4 :UInt64;        # until its time limit; 0 = none
  slurmCompat @5 :Bool;
  hasCxi @6 :Bool;               # its launches get its CXI service
}

# An operator's view of an agent from a launcher host (lattice admin status --agents): what the
# agent's admin socket answers to "status [LAUNCH_ID]" or "status-json [LAUNCH_ID]". Key holders
# only; the response carries the same struct with `text` filled.
struct AgentStatus {
  json @0 :Bool;                 # the JSON form
  launchId @1 :Text;             # that launch only; "" = everything
  text @2 :Text;                 # response: the rendered status
}

struct Envelope {
  requestId @0 :UInt64;          # 0 = notification; otherwise a request or its response
  isResponse @1 :Bool;
  error @2 :Text;                # non-empty on a failed response
  version @34 :UInt16 = 1;       # the sender's protocol version (src/rpc/version.hpp); a sender
                                 # from before this field (release 0.1.0) reads as 1
  body :union {
    none @3 :Void;
    launchProcesses @4 :LaunchProcessesRequest;   # launcher -> agent, response launchAccepted
    launchAccepted @5 :LaunchAccepted;
    abortProcesses @6 :AbortProcesses;            # launcher/head -> agent
    output @7 :OutputChunk;                       # agent -> launcher
    rankExit @8 :RankExit;                        # agent -> launcher
    launchEnded @9 :LaunchEnded;                  # agent -> launcher
    pmiFence @10 :PmiFence;                       # agent -> parent agent
    pmiFenceComplete @11 :PmiFenceComplete;       # agent -> child agents
    heartbeat @12 :Void;
    signalProcesses @13 :SignalProcesses;         # launcher -> agent
    pmixModex @14 :PmixModex;                     # agent -> agent, response pmixModex
    remoteExec @15 :RemoteExec;                   # agent -> agent
    remoteExecEvent @16 :RemoteExecEvent;         # agent -> agent, agent -> lattice-mpi-launcher
    remoteExecKill @17 :RemoteExecKill;           # agent -> agent
    execRequest @18 :ExecRequest;                 # lattice-mpi-launcher -> agent
    pmiName @19 :PmiName;                         # agent -> head agent, response pmiName
    stdinChunk @20 :StdinChunk;                   # launcher -> agent
    stdinTaken @21 :StdinTaken;                   # agent -> launcher
    nodeAnswer @22 :NodeAnswer;                   # agent -> parent agent -> ... -> launcher
    closeLink @23 :Void;                          # agent -> agent: the link's maker asks to
                                                  # close it, unused; an answer means the peer
                                                  # sends nothing more on it
    allocationStart @24 :AllocationStart;         # key holder -> agent, response none
    allocationEnd @25 :AllocationEnd;             # key holder -> agent, response none
    allocationEnded @26 :AllocationEnded;         # agent -> key holder
    allocationInfo @27 :AllocationInfo;           # user or key holder -> agent, response same
    pmixConnect @28 :PmixConnect;                 # agent -> head agent, response pmixConnect
    pmixEvent @29 :PmixEvent;                     # agent -> agent (a rank's end: response empty)
    pmixControl @30 :PmixControl;                 # agent -> agent, response empty
    pmixSpawn @31 :PmixSpawn;                     # agent -> head agent -> launcher, response same
    pmixFamily @32 :PmixFamily;                   # head agent -> agent, response empty
    agentStatus @33 :AgentStatus;                 # key holder -> agent, response same
  }
}
