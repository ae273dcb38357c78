// The `vectors noise` block of docs/protocol.md, made and checked by an implementation that is
// not ours: npm noise-handshake (Holepunch), Noise_XXpsk0_25519_ChaChaPoly_BLAKE2b over
// sodium-universal. The C++ core (src/secure/noise.cpp) is checked against the same block by
// tests/unit/secure/noise_test.cpp, so the two agree only if both follow the Noise spec.
//   node noise_vector.mjs                 prints the block (fixed inputs) for the document
//   node noise_vector.mjs --check FILE    exits 1 unless FILE's block is what noise-handshake
//                                         makes from that block's own inputs
// test_vectors.mjs runs the check on docs/protocol.md too (checkNoiseVectors).

import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import NoiseState from 'noise-handshake';
import curve from 'noise-handshake/dh.js';

const PATTERN = 'XXpsk0';
const INPUTS = ['psk', 'prologue', 'initiator_static_secret', 'initiator_ephemeral_secret',
  'responder_static_secret', 'responder_ephemeral_secret', 'payload_1', 'payload_2', 'payload_3'];

const toHex = (b) => Buffer.from(b).toString('hex');
const fromHex = (s) => Buffer.from(s, 'hex');
const filled = (first) => Buffer.from(Array.from({ length: 32 }, (_, i) => first + i));

// The document's inputs: counting bytes for the keys, handshake v3's prologue (the magic, the
// version, both cipher offers), and small payloads in messages 2 and 3.
export function fixedInputs() {
  return {
    psk: filled(0x00),
    prologue: Buffer.concat([Buffer.from('LTCSEAL\x01', 'latin1'), Buffer.from([0x03, 0x03])]),
    initiator_static_secret: filled(0x20),
    initiator_ephemeral_secret: filled(0x40),
    responder_static_secret: filled(0x60),
    responder_ephemeral_secret: filled(0x80),
    payload_1: Buffer.alloc(0),
    payload_2: Buffer.from('agent n1'),
    payload_3: Buffer.from('launcher'),
  };
}

// A key pair from a fixed secret. noise-handshake zeroes its keys when done: give it a copy.
const keyPair = (secret) => curve.generateKeyPair(Buffer.from(secret));

// Runs the handshake both ways on `inputs`; every input and output, by vector name, as hex.
export function computeVectors(inputs) {
  const initiator = new NoiseState(PATTERN, true, keyPair(inputs.initiator_static_secret),
    { psk: Buffer.from(inputs.psk) });
  const responder = new NoiseState(PATTERN, false, keyPair(inputs.responder_static_secret),
    { psk: Buffer.from(inputs.psk) });
  initiator.initialise(Buffer.from(inputs.prologue));
  responder.initialise(Buffer.from(inputs.prologue));
  // Fixed ephemerals: `send` makes a random one only while `e` is null.
  initiator.e = keyPair(inputs.initiator_ephemeral_secret);
  responder.e = keyPair(inputs.responder_ephemeral_secret);
  const initiatorStatic = toHex(initiator.s.publicKey);
  const responderStatic = toHex(responder.s.publicKey);

  const same = (got, want, what) => {
    if (toHex(got) !== toHex(want)) throw new Error(`noise-handshake: ${what} did not round-trip`);
  };
  // Hex at once: a reader keeps the peer's ephemeral as a view into the message and zeroes it
  // when it completes, which would zero the message's first bytes too.
  const m1 = toHex(initiator.send(inputs.payload_1));
  same(responder.recv(fromHex(m1)), inputs.payload_1, 'payload_1');
  const m2 = toHex(responder.send(inputs.payload_2));
  same(initiator.recv(fromHex(m2)), inputs.payload_2, 'payload_2');
  const m3 = toHex(initiator.send(inputs.payload_3));
  same(responder.recv(fromHex(m3)), inputs.payload_3, 'payload_3');
  if (!initiator.complete || !responder.complete) throw new Error('noise-handshake: not complete');
  same(initiator.hash, responder.hash, 'handshake_hash');
  same(initiator.tx, responder.rx, 'split_key_i_to_r');
  same(initiator.rx, responder.tx, 'split_key_r_to_i');

  const out = {};
  for (const name of INPUTS) out[name] = toHex(inputs[name]);
  Object.assign(out, {
    initiator_static_public: initiatorStatic,
    responder_static_public: responderStatic,
    m1,
    m2,
    m3,
    handshake_hash: toHex(initiator.hash),
    split_key_i_to_r: toHex(initiator.tx),
    split_key_r_to_i: toHex(initiator.rx),
  });
  return out;
}

// One `name = hex` a line, 32 bytes a line, continuations indented (docs/protocol.md's form).
export function formatBlock(vectors) {
  const lines = ['```vectors noise', '# inputs'];
  for (const [name, value] of Object.entries(vectors)) {
    if (name === 'initiator_static_public') lines.push('# outputs, in the order they are made');
    const chunks = value.match(/.{1,64}/g) ?? [''];
    lines.push(`${name} = ${chunks[0]}`.trimEnd(), ...chunks.slice(1).map((c) => `    ${c}`));
  }
  lines.push('```');
  return lines.join('\n');
}

// The `vectors noise` block(s) of a document, parsed as the unit tests parse them.
export function parseBlock(doc) {
  const v = {};
  for (const block of doc.matchAll(/^```vectors noise\n([\s\S]*?)^```/gm)) {
    let last = null;
    for (const line of block[1].split('\n')) {
      if (!line.trim() || line.trim().startsWith('#')) continue;
      if (line.startsWith(' ') && !line.includes('=')) { v[last] += line.trim(); continue; }
      const at = line.indexOf('=');
      if (at < 0) throw new Error(`not \`name = hex\`: ${line}`);
      last = line.slice(0, at).trim();
      if (last in v) throw new Error(`vector ${last} given twice`);
      v[last] = line.slice(at + 1).trim();
    }
  }
  return v;
}

// Problems with the document's block, one a string; none when noise-handshake reproduces it.
export function checkNoiseVectors(doc) {
  const documented = parseBlock(doc);
  if (Object.keys(documented).length === 0) return ['no ```vectors noise block'];
  const problems = [];
  const inputs = {};
  for (const name of INPUTS) {
    if (!(name in documented)) problems.push(`input ${name} is missing`);
    else inputs[name] = fromHex(documented[name]);
  }
  if (problems.length) return problems;
  const made = computeVectors(inputs);
  for (const [name, value] of Object.entries(made)) {
    if (!(name in documented)) problems.push(`${name} is missing (noise-handshake: ${value})`);
    else if (documented[name] !== value)
      problems.push(`${name} differs:\n  document        ${documented[name]}\n  noise-handshake ${value}`);
  }
  for (const name of Object.keys(documented))
    if (!(name in made)) problems.push(`${name} is not a vector noise-handshake makes`);
  return problems;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  const args = process.argv.slice(2);
  if (args.length === 0) {
    console.log(formatBlock(computeVectors(fixedInputs())));
  } else if (args.length === 2 && args[0] === '--check') {
    const problems = checkNoiseVectors(fs.readFileSync(args[1], 'utf8'));
    if (problems.length) {
      console.error(`${args[1]}: the vectors noise block is not what noise-handshake makes:`);
      for (const p of problems) console.error(`  ${p}`);
      process.exit(1);
    }
    console.log(`ok ${args[1]}: noise-handshake reproduces every vectors noise value`);
  } else {
    console.error('usage: node noise_vector.mjs [--check FILE]');
    process.exit(2);
  }
}
