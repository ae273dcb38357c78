// Checks this client against docs/protocol.md's test vectors: the handshake (as initiator, M2
// played back), the XChaCha20-Poly1305 records, and the rpc frames; and the Noise vector against
// npm noise-handshake (noise_vector.mjs). `npm test`.

import fs from 'node:fs';
import assert from 'node:assert/strict';
import sodium from 'libsodium-wrappers';
import { initiate, keyId, ROLE } from './handshake.mjs';
import { RecordReader } from './records.mjs';
import { splitFrame } from './capnp.mjs';
import * as wire from './envelope.mjs';
import { checkNoiseVectors } from './noise_vector.mjs';

const doc = fs.readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
const v = {};
for (const block of doc.matchAll(/```vectors (?:secure|rpc)\n([\s\S]*?)```/g)) {
  let last = null;
  for (const line of block[1].split('\n')) {
    if (!line || line.startsWith('#')) continue;
    if (line.startsWith(' ')) { v[last] += line.trim(); continue; }
    const [name, value] = line.split('=').map((s) => s.trim());
    v[(last = name)] = value;
  }
}
const hex = (name) => sodium.from_hex(v[name]);
const same = (a, name) => assert.equal(sodium.to_hex(a), v[name], name);

await sodium.ready;
const clusterKey = hex('cluster_key');
same(sodium.from_hex(keyId(clusterKey)), 'cluster_key_id');

// The handshake: our M1 and M3 from the vectors' inputs, M2 played back. The initiator offers
// both ciphers here (as the vectors do); the client itself offers only 0x01.
const identity = hex('initiator_identity');
const m2 = hex('m2');
let read = 0;
const written = [];
const io = {
  write: (b) => written.push(b),
  read: async (n) => m2.subarray(read, (read += n)),
};
const hs = await initiate(io, {
  clusterKey, role: identity[0], name: new TextDecoder().decode(identity.subarray(2)),
  ciphers: hex('initiator_ciphers')[0],
  ephemeral: { secret: hex('initiator_ephemeral_secret'), nonce: hex('initiator_nonce') },
});
same(written[0], 'm1');
same(hs.steps.dRI, 'kx_r_to_i');
same(hs.steps.dIR, 'kx_i_to_r');
same(hs.steps.h1, 'transcript_hash_1');
same(hs.steps.kM2, 'handshake_key_m2');
same(hs.steps.h2, 'transcript_hash_2');
same(hs.steps.kM3, 'handshake_key_m3');
same(written[1], 'm3');
same(hs.steps.h3, 'transcript_hash_3');
same(hs.tx, 'traffic_key_i_to_r');
same(hs.rx, 'traffic_key_r_to_i');
assert.equal(hs.cipher, hex('chosen_cipher')[0]);
assert.deepEqual(hs.peer, { role: ROLE.agent, name: 'n1' });
console.log('ok handshake');

// XChaCha20-Poly1305 records: the initiator's header, a record and the final record.
const reader = new RecordReader(hex('traffic_key_i_to_r'));
const stream = [hex('xchacha_i_to_r_header'), hex('xchacha_i_to_r_record_0'),
  hex('xchacha_i_to_r_record_1_final')];
const plain = stream.flatMap((b) => reader.push(b));
assert.equal(plain.length, 1);
same(plain[0], 'record_plaintext_i_to_r');
assert.ok(reader.ended, 'the final record ends the stream');
console.log('ok records');

// rpc frames, written and read.
same(wire.heartbeatRequest(1n), 'heartbeat_request_frame');
same(wire.emptyResponse(1n), 'heartbeat_response_frame');
same(wire.errorResponse(1n, "no launch 'x'"), 'error_response_frame');
const back = wire.decode(splitFrame(hex('error_response_frame'), wire.MAX_FRAME).segments);
assert.deepEqual({ ...back, body: undefined }, { requestId: 1n, isResponse: true, error: "no launch 'x'",
  version: 2, kind: 'none', body: undefined });
console.log('ok frames');

// The Noise core's vector (handshake version 3), remade by noise-handshake from its inputs.
const noiseProblems = checkNoiseVectors(doc);
assert.deepEqual(noiseProblems, [], `vectors noise:\n${noiseProblems.join('\n')}`);
console.log('ok noise');
