#!/usr/bin/env node
// A minimal Lattice launcher, written from docs/protocol.md ("A launch, from a client"):
//   launch.mjs --key-file FILE --agents [ID=]HOST:PORT,... [-n RANKS] [--pmi pmi2|pmix|none|auto]
//              [--user NAME] [--env NAME=VALUE]... [--workdir DIR] [--handshake 3|2]
//              [--identity FILE] [--authority FILE] PROGRAM [ARGS...]
// Links open with handshake 3 (Noise XXpsk0, the cluster key as PSK) unless `--handshake 2`.
// `--identity FILE` (an identity file from `lattice-agentd --certify launcher:NAME`): its static
// key is the link's, its certificate goes in M3, and the launcher's name is the certificate's.
// `--authority FILE` (or $LATTICE_AUTHORITY_FILE; the CA's .pub file): each agent's certificate
// must be signed by it, name the agent it proves, be for its static key and not have expired.
// Ranks are placed in blocks over the agents. Prints each rank's output lines as `RANK: line`
// (stderr's on stderr), then one line with every rank's exit status (`exit statuses: 0:0
// 1:signal9 2:3 3:notstarted`, or `lost`); exits with the launch's status (0 when every rank
// exited 0, else the failure's status).

import fs from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import sodium from 'libsodium-wrappers';
import { Link } from './link.mjs';
import { keyId, ROLE } from './handshake.mjs';
import { readIdentity, readAuthority, roleName } from './identity.mjs';
import * as wire from './envelope.mjs';

const ME = 'lattice-node';
const ANSWER_DEADLINE_MS = 15000;
const HEARTBEAT_MS = 1000;

function usage(message) {
  if (message) console.error(`${ME}: ${message}`);
  console.error(`usage: launch.mjs --key-file FILE --agents [ID=]HOST:PORT,... [-n RANKS]
                  [--pmi pmi2|pmix|none|auto] [--user NAME] [--env NAME=VALUE]... [--workdir DIR]
                  [--handshake 3|2] [--identity FILE] [--authority FILE] PROGRAM [ARGS...]`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { ranks: null, pmi: 'pmi2', env: [], workdir: process.cwd(), agents: [], handshake: 3 };
  let i = 0;
  const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${argv[i]} needs a value`));
  for (; i < argv.length && argv[i].startsWith('-'); i++) {
    const a = argv[i];
    if (a === '--key-file') o.keyFile = value();
    else if (a === '--agents') o.agents = value().split(',').filter(Boolean).map(parseAgent);
    else if (a === '-n' || a === '--ntasks') o.ranks = Number(value());
    else if (a === '--pmi') o.pmi = value();
    else if (a === '--user') o.user = value();
    else if (a === '--workdir') o.workdir = value();
    else if (a === '--handshake') o.handshake = Number(value());
    else if (a === '--identity') o.identityFile = value();
    else if (a === '--authority') o.authorityFile = value();
    else if (a === '--env') {
      const v = value();
      const eq = v.indexOf('=');
      if (eq < 1) usage(`--env ${v}: NAME=VALUE`);
      o.env.push([v.slice(0, eq), v.slice(eq + 1)]);
    } else if (a === '--') { i++; break; } else usage(`unknown option ${a}`);
  }
  o.program = argv[i];
  o.args = argv.slice(i + 1);
  o.keyFile ??= process.env.LATTICE_KEY_FILE;
  o.authorityFile ??= process.env.LATTICE_AUTHORITY_FILE;
  if (!o.keyFile) usage('--key-file is required');
  if (o.handshake !== 2 && o.handshake !== 3) usage('--handshake: 3 (the default) or 2');
  if (o.handshake === 2 && (o.identityFile || o.authorityFile))
    usage('--identity and --authority need handshake 3');
  if (!o.agents.length) usage('--agents is required');
  if (!o.program) usage('no program');
  if (!(o.pmi in wire.PMI_MODE)) usage(`--pmi ${o.pmi}: pmi2, pmix, none or auto`);
  o.ranks ??= o.agents.length;
  if (!Number.isInteger(o.ranks) || o.ranks < 1) usage('-n: a count of ranks, at least 1');
  return o;
}

function parseAgent(text) {
  const eq = text.indexOf('=');
  const id = eq >= 0 ? text.slice(0, eq) : null;
  const address = text.slice(eq + 1);
  const colon = address.lastIndexOf(':');
  const port = Number(address.slice(colon + 1));
  if (colon < 1 || !Number.isInteger(port) || port < 1 || port > 65535)
    usage(`--agents ${text}: [ID=]HOST:PORT`);
  return { id, host: address.slice(0, colon), port };
}

// The cluster key file: exactly 32 raw bytes, a regular file owned by us or root, mode 0600 or
// stricter (docs/protocol.md, "Transport").
function readKey(path) {
  const st = fs.lstatSync(path);
  if (!st.isFile()) throw new Error(`${path} is not a regular file`);
  if (st.uid !== process.getuid() && st.uid !== 0) throw new Error(`${path} is owned by another user`);
  if (st.mode & 0o077) throw new Error(`${path} is open to group or others (mode ${(st.mode & 0o777).toString(8)})`);
  const key = new Uint8Array(fs.readFileSync(path));
  if (key.length !== 32) throw new Error(`${path} holds ${key.length} bytes, not 32`);
  return key;
}

function jobUser(name) {
  if (!name) {
    const u = os.userInfo();
    return { uid: u.uid, gid: u.gid, name: u.username };
  }
  const id = (flag) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g'), name };
}

// Block placement: node i holds a run of consecutive ranks, the first nodes one more.
function blockLayout(ranks, nodes) {
  const used = Math.min(ranks, nodes);
  const rankNodes = [];
  for (let node = 0; node < used; node++) {
    const count = Math.floor(ranks / used) + (node < ranks % used ? 1 : 0);
    for (let k = 0; k < count; k++) rankNodes.push(node);
  }
  return { used, rankNodes };
}

function printLines(rank, stream, data) {
  const text = Buffer.from(data).toString('utf8');
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const out = stream === 1 ? process.stderr : process.stdout;
  for (const line of lines) out.write(`${rank}: ${line}\n`);
}

function describeFailure(f) {
  const who = f.rank >= 0 ? ` rank ${f.rank}` : '';
  const where = f.node ? ` on ${f.node}` : '';
  return `failure kind ${f.kind}${who}${where}, status ${f.exitCode}${f.detail ? `: ${f.detail}` : ''}`;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  await sodium.ready;
  let clusterKey;
  try {
    clusterKey = readKey(o.keyFile);
  } catch (e) {
    console.error(`${ME}: the cluster key: ${e.message}`);
    return 1;
  }
  let identity;
  let authority;
  try {
    if (o.identityFile) identity = readIdentity(o.identityFile);
  } catch (e) {
    console.error(`${ME}: the identity file: ${e.message}`);
    return 1;
  }
  try {
    if (o.authorityFile) authority = readAuthority(o.authorityFile);
  } catch (e) {
    console.error(`${ME}: the authority: ${e.message}`);
    return 1;
  }
  if (identity && identity.cert.role !== ROLE.launcher)
    console.error(`${ME}: warning: ${o.identityFile} certifies ${roleName(identity.cert.role)} ` +
      `${identity.cert.name}, not a launcher: agents will refuse it`);
  const { used, rankNodes } = blockLayout(o.ranks, o.agents.length);
  const agents = o.agents.slice(0, used);
  const name = identity ? identity.cert.name : `node-client@${os.hostname()}:${process.pid}`;
  console.error(`${ME}: launcher name ${name} (handshake ${o.handshake}` +
    `${identity ? ', certified' : ''}${authority ? ', checking the agents\' certificates' : ''})`);

  // Step 2: a sealed link to every agent, as launcher `name`.
  const opened = await Promise.allSettled(agents.map((a) =>
    Link.open({ host: a.host, port: a.port, clusterKey, name, handshake: o.handshake, identity,
      authority })));
  const links = opened.map((r) => (r.status === 'fulfilled' ? r.value : null));
  let refusedHandshake = false;
  opened.forEach((r, i) => {
    const a = agents[i];
    if (r.status === 'rejected') {
      refusedHandshake = true;
      const cause = r.reason?.cause ? ` (${r.reason.cause})` : '';
      console.error(`${ME}: agent ${a.id ?? ''}${a.id ? ' at ' : ''}${a.host}:${a.port}: handshake refused` +
        `${cause}: ${r.reason?.message ?? r.reason}` +
        (r.reason?.cause === 'key' ? ` (our cluster key id ${keyId(clusterKey)})` : ''));
    } else if (a.id && r.value.peerName !== a.id) {
      refusedHandshake = true;
      console.error(`${ME}: ${a.host}:${a.port} proved node id ${r.value.peerName}, not ${a.id}`);
    }
  });
  if (refusedHandshake) {
    await Promise.all(links.filter(Boolean).map((l) => l.close()));
    console.error(`${ME}: nothing was started`);
    return 1;
  }

  // Step 3: the same launchProcesses to every agent but for nodeIndex.
  const launchId = `node-${randomUUID()}`;
  const user = jobUser(o.user);
  const peers = agents.map((a, i) => ({ nodeId: links[i].peerName, host: a.host, port: a.port }));
  const request = { launchId, entrypoint: o.program, args: o.args, worldSize: o.ranks,
    env: o.env, pmiMode: wire.PMI_MODE[o.pmi], peers, headNodeIndex: rankNodes[0], rankNodes,
    workdir: o.workdir, user, inputRank: -2 };

  const nodes = links.map((link) => ({ link, requestId: 0n, answer: null, ended: null, lost: null,
    heard: Date.now() }));
  const exits = new Map();
  let finish;
  const finished = new Promise((resolve) => { finish = resolve; });
  const settled = (n) => n.ended || n.lost || (n.answer && n.answer !== 'accepted');
  const check = () => { if (nodes.every(settled)) finish(); };
  let aborted = false;
  const abort = (why) => {
    if (aborted) return;
    aborted = true;
    console.error(`${ME}: aborting the launch: ${why}`);
    for (const n of nodes) if (n.answer !== 'refused') n.link.send(wire.abortProcesses(launchId, why, 1));
  };

  nodes.forEach((n, index) => {
    const link = n.link;
    link.onMessage = (m) => {
      n.heard = Date.now();
      if (m.isResponse) {
        if (m.requestId !== n.requestId) return; // a heartbeat's answer
        if (m.error) {
          n.answer = 'refused';
          console.error(`${ME}: agent ${link.peerName} refused the launch: ${m.error}`);
          abort(`agent ${link.peerName} refused the launch`);
        } else {
          n.answer = 'accepted';
        }
        check();
        return;
      }
      if (m.requestId !== 0n) { // the agent's own requests
        link.send(m.kind === 'heartbeat' ? wire.emptyResponse(m.requestId)
          : wire.errorResponse(m.requestId, 'method not served by this launcher'));
        return;
      }
      const b = m.body;
      if (!b || b.launchId !== launchId) return;
      if (m.kind === 'output') printLines(b.rank, b.stream, b.data);
      else if (m.kind === 'rankExit') exits.set(b.rank, b);
      else if (m.kind === 'launchEnded') {
        n.ended = b;
        console.error(`${ME}: node ${link.peerName} ended the launch${b.failed ? ' (failed)' : ''}`);
        if (b.failed) console.error(`${ME}: node ${link.peerName}: ${describeFailure(b.failure)}`);
        check();
      }
    };
    link.onClose = (why) => {
      if (settled(n)) return;
      n.lost = why ?? 'the link closed';
      console.error(`${ME}: lost agent ${link.peerName}: ${n.lost}`);
      abort(`agent ${link.peerName} was lost`);
      check();
    };
    n.requestId = link.requestId();
    link.send(wire.launchProcesses(n.requestId, { ...request, nodeIndex: index }));
  });

  // Step 6: a heartbeat request on every link each second, until the end. An agent from which
  // nothing (not even a heartbeat's answer) came for 3 of them is lost.
  const heartbeat = setInterval(() => {
    for (const n of nodes) {
      if (!settled(n) && Date.now() - n.heard > 3 * HEARTBEAT_MS + 500) {
        n.link.socket.destroy();
        n.link.lost(`no heartbeat answered for ${(Date.now() - n.heard) / 1000} s`);
      }
      n.link.send(wire.heartbeatRequest(n.link.requestId()));
    }
  }, HEARTBEAT_MS);
  const deadline = setTimeout(() => {
    const silent = nodes.filter((n) => !n.answer && !n.lost).map((n) => n.link.peerName);
    if (silent.length) abort(`no answer within ${ANSWER_DEADLINE_MS / 1000} s from ${silent.join(', ')}`);
  }, ANSWER_DEADLINE_MS);

  await finished;
  clearInterval(heartbeat);
  clearTimeout(deadline);
  // Step 7: the final record and the TCP close on every link.
  await Promise.all(nodes.map((n) => n.link.close()));

  const statuses = [];
  for (let r = 0; r < o.ranks; r++) {
    const e = exits.get(r);
    // A rank with no rankExit never started (its launch ended before it was spawned), unless
    // its node was lost: then nobody knows.
    const none = nodes[rankNodes[r]].lost ? 'lost' : 'notstarted';
    statuses.push(`${r}:${!e ? none : e.signal ? `signal${e.signal}` : e.exitCode}`);
  }
  console.log(`exit statuses: ${statuses.join(' ')}`);

  if (nodes.some((n) => n.answer === 'refused' || n.lost)) return 1;
  const failures = nodes.filter((n) => n.ended?.failed).map((n) => n.ended.failure);
  if (failures.length) {
    const first = failures.find((f) => f.rank >= 0) ?? failures[0];
    return first.exitCode || 1;
  }
  const bad = [...exits.values()].find((e) => e.exitCode || e.signal);
  return bad ? bad.exitCode || 128 + bad.signal : 0;
}

main().then((code) => process.exit(code), (e) => {
  console.error(`${ME}: ${e.stack ?? e}`);
  process.exit(1);
});
