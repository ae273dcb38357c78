// Checks this client against docs/protocol.md's test vectors: handshake 2 (as initiator, M2
// played back), the XChaCha20-Poly1305 records, and the rpc frames; the Noise vector against
// npm noise-handshake (noise_vector.mjs); the launch signature vector's certificate and
// Ed25519 signature (this client launches as a star and signs nothing); and handshake 3 (initiate3) against a responder that
// noise-handshake plays in this process (payloads, certificates, notices). `npm test`.

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
for (const block of doc.matchAll(/```vectors (?:secure|rpc|launch)\n([\s\S]*?)```/g)) {
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

// Handshake 3 as initiator (initiate3) against a responder played by noise-handshake in this
// process: M1's form and prologue, M2's payload, the certificate rules, Split's direction, the
// notices. No vector in the document covers Lattice's payloads, so the responder is built here
// from the document's description.
{
  const { initiate3, HandshakeRefused } = await import('./handshake.mjs');
  const { default: NoiseState } = await import('noise-handshake');
  const { default: curve } = await import('noise-handshake/dh.js');
  const { parseCertificate } = await import('./identity.mjs');
  const ca = sodium.crypto_sign_keypair();
  const otherCa = sodium.crypto_sign_keypair();
  const be64 = (n) => { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(n)); return b; };
  const cat = (...p) => Uint8Array.from(p.flatMap((x) => [...x]));
  const ident = (role, name) => cat([role, name.length], new TextEncoder().encode(name));
  const certificate = (role, name, pub, notAfter, key = ca.privateKey) => {
    const body = cat(new TextEncoder().encode('LTCCERT\x01'), ident(role, name), pub, be64(notAfter));
    return cat(body, sodium.crypto_sign_detached(body, key));
  };
  const later = Math.floor(Date.now() / 1000) + 3600;
  const launcherSecret = sodium.randombytes_buf(32);
  const launcherCert = certificate(1, 'node-client', sodium.crypto_scalarmult_base(launcherSecret), later);
  const launcherId = { secret: launcherSecret, certificate: launcherCert, cert: parseCertificate(launcherCert) };

  // A responder: reads M1, answers M2 (or `reply(m1)`'s bytes), reads M3. Returns what it saw.
  async function run({ agentCert, flags = 0, cR = 0x01, identity, authority, reply, staticSecret }) {
    const rSecret = staticSecret ?? sodium.randombytes_buf(32);
    const responder = new NoiseState('XXpsk0', false, curve.generateKeyPair(Buffer.from(rSecret)),
      { psk: Buffer.from(clusterKey) });
    const out = [];
    let input = null;
    let m3Payload = null;
    const io = {
      write: (b) => out.push(Uint8Array.from(b)),
      read: async (n) => {
        if (!input) {
          const m1 = out.shift();
          assert.equal(m1.length, 58, 'M1 is 58 bytes');
          assert.deepEqual([...m1.subarray(0, 10)], [...hex('magic'), 0x03, 0x01]);
          if (reply) input = reply(m1);
          else {
            responder.initialise(Buffer.from(m1.subarray(0, 10)));
            responder.recv(Buffer.from(m1.subarray(10)));
            const cert = agentCert ?? new Uint8Array(0);
            const m2 = responder.send(Buffer.from(cat([cR, flags], ident(2, 'n1'), [cert.length >> 8, cert.length & 0xff], cert)));
            input = cat([m2.length >> 8, m2.length & 0xff], m2);
          }
        }
        const b = input.subarray(0, n);
        input = input.subarray(n);
        if (b.length < n) throw new HandshakeRefused('closed', 'the responder closed');
        return b;
      },
    };
    const hs = await initiate3(io, { clusterKey, role: 1, name: identity ? identity.cert.name : 'x@y:1',
      identity, authority });
    const m3 = out.shift();
    assert.equal((m3[0] << 8) | m3[1], m3.length - 2);
    m3Payload = new Uint8Array(responder.recv(Buffer.from(m3.subarray(2))));
    assert.ok(responder.complete);
    // Split: the initiator's tx is what the responder receives with.
    assert.equal(sodium.to_hex(hs.tx), Buffer.from(responder.rx).toString('hex'));
    assert.equal(sodium.to_hex(hs.rx), Buffer.from(responder.tx).toString('hex'));
    return { hs, m3Payload, responderStatic: sodium.crypto_scalarmult_base(rSecret) };
  }
  const refusal = async (cause, text, args) => {
    await assert.rejects(run(args), (e) => e instanceof HandshakeRefused && e.cause === cause &&
      e.message.includes(text), `expected a refusal (${cause}) with ${JSON.stringify(text)}`);
  };

  // Uncertified both ways.
  let r = await run({});
  assert.deepEqual(r.hs.peer, { role: 2, name: 'n1' });
  assert.equal(r.hs.cipher, 0x01);
  assert.deepEqual([...r.m3Payload], [...ident(1, 'x@y:1'), 0, 0]);
  // Certified both ways: M3 carries our certificate; the agent's passes every rule.
  const agentSecret = sodium.randombytes_buf(32);
  const agentPub = sodium.crypto_scalarmult_base(agentSecret);
  r = await run({ staticSecret: agentSecret, agentCert: certificate(2, 'n1', agentPub, later),
    identity: launcherId, authority: ca.publicKey, flags: 1 });
  assert.deepEqual([...r.m3Payload], [...ident(1, 'node-client'), launcherCert.length >> 8,
    launcherCert.length & 0xff, ...launcherCert]);
  const base = { staticSecret: agentSecret, identity: launcherId, authority: ca.publicKey };
  await refusal('certificate', 'is not signed by this side\'s authority',
    { ...base, agentCert: certificate(2, 'n1', agentPub, later, otherCa.privateKey) });
  await refusal('certificate', 'but its certificate is for agent n2',
    { ...base, agentCert: certificate(2, 'n2', agentPub, later) });
  await refusal('certificate', 'for another static key',
    { ...base, agentCert: certificate(2, 'n1', sodium.randombytes_buf(32), later) });
  await refusal('certificate', 'expired', { ...base, agentCert: certificate(2, 'n1', agentPub, 1000) });
  await refusal('certificate', 'has no certificate', base);
  await refusal('certificate', 'agent n1 requires a certified identity and this side has none', { flags: 1 });
  await refusal('ciphers', 'no common record cipher', { cR: 0x02 });
  // The notices, and a length no M2 has.
  await refusal('key', 'key notice', { reply: () => cat(hex('magic'), [0x03, 0x01]) });
  await refusal('version', 'handshake version 4', { reply: () => cat(hex('magic'), [0x04]) });
  await refusal('malformed', 'outside 103..758', { reply: () => Uint8Array.from([0x00, 0x10]) });
  // An M2 that does not verify (another key, or changed bytes).
  await refusal('key', 'M2 does not verify', { reply: () => cat([0, 120], sodium.randombytes_buf(120)) });
  console.log('ok handshake 3');
}

// Launch signatures: the authority and the launcher's signing key from their seeds, the
// version 2 certificate, and the signature over the documented signed bytes. (The canonical
// form itself is Cap'n Proto's; this client has no canonicalizer, as it never signs.)
{
  const { parseCertificate } = await import('./identity.mjs');
  const authority = sodium.crypto_sign_seed_keypair(hex('authority_seed'));
  same(authority.publicKey, 'authority_public');
  const cert = parseCertificate(hex('launcher_certificate'));
  assert.equal(cert.version, 2);
  assert.equal(cert.name, 'ops');
  assert.ok(sodium.crypto_sign_verify_detached(cert.signature, cert.signed, authority.publicKey));
  const signing = sodium.crypto_sign_seed_keypair(hex('launcher_signing_seed'));
  assert.deepEqual(cert.signingKey, signing.publicKey);
  assert.deepEqual(cert.staticKey, sodium.crypto_scalarmult_base(hex('launcher_static_secret')));
  const signedBytes = hex('signed_bytes');
  assert.equal(new TextDecoder().decode(signedBytes.subarray(0, 8)), 'LTCLNCH\x01');
  assert.ok(sodium.crypto_sign_verify_detached(hex('signature'), signedBytes, cert.signingKey));
  console.log('ok launch signature');
}
