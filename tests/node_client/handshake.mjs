// The handshake, initiator's side (docs/protocol.md, "Handshake"): M1, M2, M3, then the traffic
// keys. Version 3 (`initiate3`, the default): Noise_XXpsk0_25519_ChaChaPoly_BLAKE2b by npm
// noise-handshake, the cluster key as PSK, identities and certificates in M2's and M3's
// payloads. Version 2 (`initiate`, `--handshake 2`): the project's own construction.
// `io.read(n)` gives exactly n bytes (or fails at the connection's end), `io.write(bytes)`
// sends them.

import sodium from 'libsodium-wrappers';
import NoiseState from 'noise-handshake';
import curve from 'noise-handshake/dh.js';
import { judgeCertificate, roleName } from './identity.mjs';

const enc = (s) => new TextEncoder().encode(s);
export const MAGIC = Uint8Array.from([0x4c, 0x54, 0x43, 0x53, 0x45, 0x41, 0x4c, 0x01]);
export const HANDSHAKE_VERSION = 0x02;
export const HANDSHAKE_VERSION_3 = 0x03;
export const CIPHER_XCHACHA = 0x01;
export const ROLE = { launcher: 0x01, agent: 0x02 };
const LABEL = {
  transcript: enc('lattice sealed link v1'),
  m2: enc('handshake responder->initiator'),
  m3: enc('handshake initiator->responder'),
  trafficRI: enc('traffic responder->initiator'),
  trafficIR: enc('traffic initiator->responder'),
};
const ZERO_NONCE = new Uint8Array(24);

// A refusal, named as the document names it (not_lattice, version, ciphers, key, certificate,
// malformed).
export class HandshakeRefused extends Error {
  constructor(cause, message) {
    super(message);
    this.cause = cause;
  }
}

export const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};
const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const u16be = (n) => Uint8Array.from([n >> 8, n & 0xff]);

export const H = (x) => sodium.crypto_generichash(32, x, null);
export function KDF(clusterKey, label, d, h) {
  const st = sodium.crypto_generichash_init(clusterKey, 32);
  sodium.crypto_generichash_update(st, label);
  sodium.crypto_generichash_update(st, d);
  sodium.crypto_generichash_update(st, h);
  return sodium.crypto_generichash_final(st, 32);
}

export function keyId(clusterKey) {
  return sodium.to_hex(sodium.crypto_generichash(8, enc('lattice cluster key id'), clusterKey));
}

export function encodeIdentity(role, name) {
  const bytes = enc(name);
  if (bytes.length < 1 || bytes.length > 255 || bytes.some((b) => b < 0x21 || b > 0x7e))
    throw new Error(`invalid name ${JSON.stringify(name)}: 1-255 printable ASCII bytes, no space`);
  return concat([role, bytes.length], bytes);
}

export function decodeIdentity(bytes) {
  const n = bytes[1];
  if (bytes.length < 3 || bytes.length !== 2 + n || (bytes[0] !== 1 && bytes[0] !== 2) ||
      bytes.subarray(2).some((b) => b < 0x21 || b > 0x7e))
    throw new HandshakeRefused('malformed', 'the peer\'s identity is malformed');
  return { role: bytes[0], name: new TextDecoder().decode(bytes.subarray(2)) };
}

// Runs the handshake as initiator. `ephemeral` ({ secret, nonce }) is for the test vectors only;
// normally fresh. Returns { peer: {role, name}, cipher, tx, rx, steps (the values made) }.
export async function initiate(io, { clusterKey, role, name, ciphers = CIPHER_XCHACHA, ephemeral }) {
  const secret = ephemeral ? Uint8Array.from(ephemeral.secret) : sodium.randombytes_buf(32);
  const eI = sodium.crypto_scalarmult_base(secret);
  const nI = ephemeral?.nonce ?? sodium.randombytes_buf(32);
  const m1 = concat(MAGIC, [HANDSHAKE_VERSION, ciphers], eI, nI);
  io.write(m1);

  // M2, or the 9-byte version notice.
  const head = await io.read(8);
  if (equal(head, MAGIC)) {
    const [version] = await io.read(1);
    throw new HandshakeRefused('version',
      `the peer speaks handshake version ${version} and this side ${HANDSHAKE_VERSION}`);
  }
  const m2a = concat(head, await io.read(57)); // e_R | n_R | c_R, 65 bytes
  const lenBytes = await io.read(2);
  const lR = (lenBytes[0] << 8) | lenBytes[1];
  if (lR < 19 || lR > 273) throw new HandshakeRefused('malformed', `L_R ${lR} is outside 19..273`);
  const sR = await io.read(lR);
  const eR = m2a.subarray(0, 32);
  const cR = m2a[64];
  const common = ciphers & cR;
  const cipher = common & 0x02 ? 0x02 : common & 0x01 ? 0x01 : 0;
  if (!cipher) throw new HandshakeRefused('ciphers', `no common record cipher (ours ${ciphers}, theirs ${cR})`);

  let keys;
  try {
    keys = sodium.crypto_kx_client_session_keys(eI, secret, eR); // rx = d_RI, tx = d_IR
  } catch {
    throw new HandshakeRefused('malformed', 'the key exchange failed (a low-order public key)');
  }
  const dRI = keys.sharedRx;
  const dIR = keys.sharedTx;
  const t1 = concat(LABEL.transcript, m1, m2a);
  const h1 = H(t1);
  const kM2 = KDF(clusterKey, LABEL.m2, dRI, h1);
  let identityR;
  try {
    identityR = sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(null, sR, h1, ZERO_NONCE, kM2);
  } catch {
    throw new HandshakeRefused('key',
      'the agent\'s proof does not open: it holds another cluster key (or the bytes were changed)');
  }
  const peer = decodeIdentity(identityR);

  const t2 = concat(t1, lenBytes, sR);
  const h2 = H(t2);
  const kM3 = KDF(clusterKey, LABEL.m3, dIR, h2);
  const sI = sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
    encodeIdentity(role, name), h2, null, ZERO_NONCE, kM3);
  const m3 = concat(u16be(sI.length), sI);
  io.write(m3);
  const h3 = H(concat(t2, m3));
  const tx = KDF(clusterKey, LABEL.trafficIR, dIR, h3);
  const rx = KDF(clusterKey, LABEL.trafficRI, dRI, h3);
  const steps = { m1, m2: concat(m2a, lenBytes, sR), m3, dRI: dRI.slice(), dIR: dIR.slice(),
    h1, h2, h3, kM2: kM2.slice(), kM3: kM3.slice() }; // for test_vectors.mjs
  for (const k of [secret, dRI, dIR, kM2, kM3]) sodium.memzero(k);
  return { peer, cipher, tx, rx, steps };
}

// Both sides compute c_I & c_R: AES-256-GCM (0x02) when set, else XChaCha20-Poly1305 (0x01).
function chooseCipher(cI, cR) {
  const common = cI & cR;
  const cipher = common & 0x02 ? 0x02 : common & 0x01 ? 0x01 : 0;
  if (!cipher) throw new HandshakeRefused('ciphers', `no common record cipher (ours ${cI}, theirs ${cR})`);
  return cipher;
}

// M2's payload: c_R (1) | flags (1) | identity (role | n | name) | u16 n | certificate (n).
export function parseM2Payload(p) {
  const bad = (why) => new HandshakeRefused('malformed', `M2's payload is malformed: ${why}`);
  if (p.length < 2 + 3 + 2) throw bad(`${p.length} bytes`);
  const cR = p[0];
  const flags = p[1];
  const idEnd = 2 + 2 + p[3];
  if (idEnd + 2 > p.length) throw bad('the identity runs past its end');
  const identity = decodeIdentity(p.subarray(2, idEnd));
  const n = (p[idEnd] << 8) | p[idEnd + 1];
  if (idEnd + 2 + n !== p.length) throw bad(`a certificate of ${n} bytes in ${p.length - idEnd - 2}`);
  return { cR, flags, identity, certificate: p.slice(idEnd + 2) };
}

export const FLAG_REQUIRES_CERTIFICATE = 0x01;
const M2_MIN = 103, M2_MAX = 758;

// Version 3 as initiator. `identity` ({ secret, certificate, cert }, an identity file) gives the
// static key and the certificate sent in M3; without one the static pair is fresh and M3 carries
// no certificate. `authority` (the CA's Ed25519 public key): the agent's certificate must pass.
// `fixed` ({ staticSecret, ephemeralSecret }) is for tests only. Returns { peer, cipher, tx, rx,
// version: 3, flags, peerCertificate, steps }.
export async function initiate3(io, { clusterKey, role, name, ciphers = CIPHER_XCHACHA, identity,
  authority, fixed, now }) {
  const staticSecret = identity?.secret ?? fixed?.staticSecret;
  const staticPair = staticSecret ? curve.generateKeyPair(Buffer.from(staticSecret)) : undefined;
  const noise = new NoiseState('XXpsk0', true, staticPair, { psk: Buffer.from(clusterKey) });
  const head = Uint8Array.from([...MAGIC, HANDSHAKE_VERSION_3, ciphers]);
  noise.initialise(Buffer.from(head)); // the prologue: M1's first 10 bytes
  if (fixed?.ephemeralSecret) noise.e = curve.generateKeyPair(Buffer.from(fixed.ephemeralSecret));
  const m1 = concat(head, noise.send());
  io.write(m1);

  // M2, or a notice: a first byte of 'L' (0x4c) starts the magic, never an M2 length.
  const first = await io.read(1);
  if (first[0] === MAGIC[0]) {
    const rest = await io.read(8); // magic[1..8) and the version
    const notice = concat(first, rest);
    if (!equal(notice.subarray(0, 8), MAGIC))
      throw new HandshakeRefused('not_lattice', 'the peer answered with neither M2 nor a notice');
    const version = notice[8];
    if (version !== HANDSHAKE_VERSION_3)
      throw new HandshakeRefused('version',
        `the peer speaks handshake version ${version} and this side 2 to 3 (this link opened with 3)`);
    const [what] = await io.read(1);
    if (what === 0x01)
      throw new HandshakeRefused('key',
        'the agent sent the key notice: it holds another cluster key');
    throw new HandshakeRefused('malformed', `a notice of kind ${what}`);
  }
  const second = await io.read(1);
  const lenBytes = concat(first, second);
  const L = (first[0] << 8) | second[0];
  if (L < M2_MIN || L > M2_MAX) throw new HandshakeRefused('malformed', `M2's L ${L} is outside ${M2_MIN}..${M2_MAX}`);
  const m2 = await io.read(L);
  let payload;
  try {
    // A copy: noise-handshake keeps e_R as a view into it, and zeroes it when it completes.
    payload = new Uint8Array(noise.recv(Buffer.from(m2)));
  } catch {
    throw new HandshakeRefused('key',
      'M2 does not verify: the agent holds another cluster key (or the bytes were changed)');
  }
  const rs = Uint8Array.from(noise.rs); // s_R, as the handshake proved it
  const m2p = parseM2Payload(payload);
  const cipher = chooseCipher(ciphers, m2p.cR);
  const peer = m2p.identity;
  if (authority) {
    const why = judgeCertificate(m2p.certificate, { authority, identity: peer, provenStatic: rs, now });
    if (why) throw new HandshakeRefused('certificate', why);
  }
  if ((m2p.flags & FLAG_REQUIRES_CERTIFICATE) && !identity)
    throw new HandshakeRefused('certificate',
      `${roleName(peer.role)} ${peer.name} requires a certified identity and this side has none`);

  const cert = identity?.certificate ?? new Uint8Array(0);
  const p3 = concat(encodeIdentity(role, name), u16be(cert.length), cert);
  const body3 = noise.send(Buffer.from(p3));
  const m3 = concat(u16be(body3.length), body3);
  if (!noise.complete) throw new Error('noise-handshake did not complete after M3');
  // Split(): the first key seals initiator → responder, the second responder → initiator;
  // noise-handshake's initiator has tx = the first, rx = the second.
  const tx = Uint8Array.from(noise.tx);
  const rx = Uint8Array.from(noise.rx);
  const hash = Uint8Array.from(noise.hash);
  sodium.memzero(noise.tx);
  sodium.memzero(noise.rx);
  io.write(m3);
  return { peer, cipher, tx, rx, version: 3, flags: m2p.flags, peerCertificate: m2p.certificate,
    peerStatic: rs, steps: { m1, m2: concat(lenBytes, m2), m3, hash } };
}
