// rpc frames and the Envelope (docs/protocol.md, "rpc frames", "The Envelope", "Messages"): the
// few message kinds a launcher sends and reads, over capnp.mjs.
//
// Field places are those Cap'n Proto's layout gives schema/lattice.capnp; they can be printed
// with `capnp compile -o- schema/lattice.capnp | capnp decode /usr/include/capnp/schema.capnp
// CodeGeneratorRequest` (each slot's offset is in units of its own size, a Bool's in bits).
// test_vectors.mjs checks them against the document's frame vectors.

import { MessageBuilder, MessageReader, splitFrame } from './capnp.mjs';

export const PROTOCOL_VERSION = 2;
export const MAX_FRAME = 64 * 1024 * 1024;

// Envelope: 2 data words, 2 pointers. body's discriminant is the UInt16 at offset 5.
const ENVELOPE = { dataWords: 2, ptrs: 2, requestId: 0, isResponse: 64, version: 6, which: 5,
  error: 0, body: 1 };
export const WHICH = { none: 0, launchProcesses: 1, launchAccepted: 2, abortProcesses: 3, output: 4,
  rankExit: 5, launchEnded: 6, heartbeat: 9, signalProcesses: 10, stdinTaken: 18 };
const WHICH_NAME = Object.fromEntries(Object.entries(WHICH).map(([k, v]) => [v, k]));

export const PMI_MODE = { pmi2: 0, pmix: 1, none: 2, auto: 3 };

// Builds one frame: { requestId, isResponse, error, which, fill(bodyBuilder) } where fill gets
// the body's struct builder (for kinds that carry a struct).
function frame({ requestId = 0, isResponse = false, error = '', which, body }) {
  const msg = new MessageBuilder();
  const env = msg.initRoot(ENVELOPE.dataWords, ENVELOPE.ptrs);
  env.setU64(ENVELOPE.requestId, requestId);
  env.setBool(ENVELOPE.isResponse, isResponse);
  env.setU16(ENVELOPE.version, PROTOCOL_VERSION ^ 1); // stored XOR its default, 1
  env.setU16(ENVELOPE.which, which);
  if (error) env.setText(ENVELOPE.error, error);
  if (body) body(env, ENVELOPE.body);
  return msg.frame();
}

export const heartbeatRequest = (requestId) => frame({ requestId, which: WHICH.heartbeat });
export const emptyResponse = (requestId) => frame({ requestId, isResponse: true, which: WHICH.none });
export const errorResponse = (requestId, error) =>
  frame({ requestId, isResponse: true, error, which: WHICH.none });

// LaunchProcessesRequest: 9 data words, 20 pointers.
export function launchProcesses(requestId, r) {
  return frame({ requestId, which: WHICH.launchProcesses, body: (env, at) => {
    const s = env.initStruct(at, 9, 20);
    s.setText(0, r.launchId);
    s.setText(2, r.entrypoint);
    s.setTextList(3, r.args);
    const env_ = s.initStructList(4, r.env.length, 0, 2); // EnvVar: name, value
    r.env.forEach(([name, value], i) => { env_[i].setText(0, name); env_[i].setText(1, value); });
    s.setU32(2, r.worldSize);
    s.setU16(6, r.pmiMode);
    const peers = s.initStructList(6, r.peers.length, 1, 2); // PeerInfo: nodeId, host; port
    r.peers.forEach((p, i) => {
      peers[i].setText(0, p.nodeId);
      peers[i].setText(1, p.host);
      peers[i].setU16(0, p.port);
    });
    s.setU32(4, r.headNodeIndex);
    s.setU32(5, r.nodeIndex);
    s.setU32List(7, r.rankNodes);
    s.setText(8, r.workdir);
    const user = s.initStruct(9, 1, 2); // JobUser: uid, gid; groups, name
    user.setU32(0, r.user.uid);
    user.setU32(1, r.user.gid);
    user.setText(1, r.user.name);
    // killOnBadExit (bit 114) defaults to true and is stored XOR it: left 0, it is true.
    s.setI32(10, r.inputRank);
  } });
}

// AbortProcesses { launchId, failure: Failure { kind other, detail, exitCode } }.
export function abortProcesses(launchId, detail, exitCode) {
  return frame({ which: WHICH.abortProcesses, body: (env, at) => {
    const s = env.initStruct(at, 0, 2);
    s.setText(0, launchId);
    const f = s.initStruct(1, 5, 3);
    f.setText(0, detail);
    f.setI32(1, exitCode);
    f.setI32(2, -1); // rank: not one rank's doing
  } });
}

function failure(f) {
  return { kind: f.u16(0), detail: f.text(0), exitCode: f.i32(1), rank: f.i32(2), node: f.text(1),
    signal: f.i32(3) };
}

const BODY = {
  launchAccepted: (s) => ({ nodeId: s.text(0), stdinTaken: s.bool(64) }),
  output: (s) => ({ launchId: s.text(0), rank: s.u32(0), stream: s.u16(2), data: s.data(1) }),
  rankExit: (s) => ({ launchId: s.text(0), rank: s.u32(0), nodeIndex: s.u32(1), exitCode: s.i32(2),
    signal: s.i32(3), pid: s.i32(4), outOfMemory: s.bool(160) }),
  launchEnded: (s) => ({ launchId: s.text(0), nodeIndex: s.u32(0), failed: s.bool(32),
    failure: failure(s.struct(1)) }),
};

// One frame's segments to a plain object: { requestId (BigInt), isResponse, error, version,
// kind (a name, or `unknown N`), body }.
export function decode(segments) {
  const env = new MessageReader(segments).root();
  const which = env.u16(ENVELOPE.which);
  const kind = WHICH_NAME[which] ?? `unknown ${which}`;
  const read = BODY[kind];
  return {
    requestId: env.u64(ENVELOPE.requestId),
    isResponse: env.bool(ENVELOPE.isResponse),
    error: env.text(ENVELOPE.error),
    version: env.u16(ENVELOPE.version) ^ 1,
    kind,
    body: read ? read(env.struct(ENVELOPE.body)) : null,
  };
}

// Reassembles frames from the records' plaintext, a byte stream.
export class FrameReader {
  constructor() { this.pending = new Uint8Array(0); }

  // Returns the decoded envelopes the bytes complete.
  push(bytes) {
    const joined = new Uint8Array(this.pending.length + bytes.length);
    joined.set(this.pending);
    joined.set(bytes, this.pending.length);
    const out = [];
    let rest = joined;
    for (;;) {
      const f = splitFrame(rest, MAX_FRAME);
      if (!f) break;
      out.push(decode(f.segments));
      rest = rest.subarray(f.size);
    }
    this.pending = rest.slice();
    return out;
  }
}
