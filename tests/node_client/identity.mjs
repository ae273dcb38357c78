// Certificates, identity files and the authority's public key (docs/protocol.md, "Handshake" →
// "Version 3: Noise" → "Certificates"). All integers big-endian.
//   certificate   = "LTCCERT" | version (1 or 2) | role (1) | n (1) | name (n) |
//                   static public key (32) | [version 2: signing public key (32)] |
//                   not after (8, Unix seconds) | signature (64, Ed25519 over every byte before)
//   identity file = "LTCIDNT" | version | static secret key (32) | [version 2: signing key
//                   seed (32)] | certificate   (a private file)
// This client launches as a star, so it never signs (only relayed launches are signed); it
// reads a version 2 identity for its static key and certificate.
//   authority.pub = a '#' comment line, then the Ed25519 public key as one hex line

import fs from 'node:fs';
import sodium from 'libsodium-wrappers';

const enc = (s) => new TextEncoder().encode(s);
export const CERT_MAGIC = enc('LTCCERT');
export const IDENTITY_MAGIC = enc('LTCIDNT');
const VERSIONS = [1, 2];
const ROLE_NAMES = { 1: 'launcher', 2: 'agent' };
export const roleName = (role) => ROLE_NAMES[role] ?? `role ${role}`;

const startsWith = (bytes, prefix) => bytes.length >= prefix.length &&
  prefix.every((b, i) => bytes[i] === b);
const equal = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// A private file as the cluster key's: a regular file (not a symlink), owned by the reader or
// root, no group or other access (docs/protocol.md, "Transport").
export function readPrivateFile(path) {
  const st = fs.lstatSync(path);
  if (!st.isFile()) throw new Error(`${path} is not a regular file`);
  if (st.uid !== process.getuid() && st.uid !== 0) throw new Error(`${path} is owned by another user`);
  if (st.mode & 0o077)
    throw new Error(`${path} is open to group or others (mode ${(st.mode & 0o777).toString(8)})`);
  return new Uint8Array(fs.readFileSync(path));
}

// Parses a certificate's fields; throws on a malformed one. `signed` is the bytes the signature
// covers.
export function parseCertificate(bytes) {
  if (!startsWith(bytes, CERT_MAGIC)) throw new Error('not a certificate (no LTCCERT magic)');
  if (bytes.length < 10) throw new Error('a truncated certificate');
  const version = bytes[7];
  if (!VERSIONS.includes(version)) throw new Error(`a certificate of version ${version}`);
  const signing = version === 2 ? 32 : 0;
  const role = bytes[8];
  const n = bytes[9];
  const size = 10 + n + 32 + signing + 8 + 64;
  if (n < 1 || bytes.length !== size)
    throw new Error(`a certificate of ${bytes.length} bytes (its name of ${n} makes ${size})`);
  const name = bytes.subarray(10, 10 + n);
  if (name.some((b) => b < 0x21 || b > 0x7e)) throw new Error('a certificate whose name is not printable');
  let at = 10 + n;
  const staticKey = bytes.slice(at, at + 32);
  at += 32;
  const signingKey = signing ? bytes.slice(at, at + 32) : null;
  at += signing;
  const notAfter = new DataView(bytes.buffer, bytes.byteOffset + at, 8).getBigUint64(0, false);
  at += 8;
  return { version, role, name: new TextDecoder().decode(name), staticKey, signingKey, notAfter,
    signed: bytes.subarray(0, at), signature: bytes.slice(at, at + 64), bytes };
}

// The authority's public key from its .pub file.
export function readAuthority(path) {
  const lines = fs.readFileSync(path, 'utf8').split('\n').map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  if (lines.length !== 1 || !/^[0-9a-f]{64}$/i.test(lines[0]))
    throw new Error(`${path}: not an authority's public key (one line of 64 hex digits after a '#' comment)`);
  return sodium.from_hex(lines[0].toLowerCase());
}

// An identity file: { secret, publicKey, certificate (bytes), cert (parsed) }.
export function readIdentity(path) {
  const bytes = readPrivateFile(path);
  if (!startsWith(bytes, IDENTITY_MAGIC) || !VERSIONS.includes(bytes[7]))
    throw new Error(`${path} is not an identity file (no LTCIDNT magic and version 1 or 2)`);
  const seed = bytes[7] === 2 ? 32 : 0;
  if (bytes.length < 8 + 32 + seed + 10) throw new Error(`${path}: a truncated identity file`);
  const secret = bytes.slice(8, 40);
  const certificate = bytes.slice(40 + seed);
  let cert;
  try {
    cert = parseCertificate(certificate);
  } catch (e) {
    throw new Error(`${path}: ${e.message}`);
  }
  if (cert.version !== bytes[7])
    throw new Error(`${path}: a version ${bytes[7]} file holding a version ${cert.version} certificate`);
  const publicKey = sodium.crypto_scalarmult_base(secret);
  if (!equal(publicKey, cert.staticKey))
    throw new Error(`${path}: its certificate is for another static key than its secret's`);
  return { secret, publicKey, certificate, cert };
}

// Why the peer's certificate is not taken (null when it is), by docs/protocol.md's four rules:
// signed by the authority, names the identity sent beside it, is for the static key the peer
// proved in the handshake, and its `not after` has not passed.
export function judgeCertificate(certificate, { authority, identity, provenStatic, now = Date.now() }) {
  if (!certificate.length)
    return `${roleName(identity.role)} ${identity.name} has no certificate`;
  let cert;
  try {
    cert = parseCertificate(certificate);
  } catch (e) {
    return `${roleName(identity.role)} ${identity.name}'s certificate is malformed: ${e.message}`;
  }
  if (!sodium.crypto_sign_verify_detached(cert.signature, cert.signed, authority))
    return `${roleName(identity.role)} ${identity.name}'s certificate is not signed by this side's authority`;
  if (cert.role !== identity.role || cert.name !== identity.name)
    return `the peer claims to be ${roleName(identity.role)} ${identity.name} but its certificate is ` +
      `for ${roleName(cert.role)} ${cert.name}`;
  if (!provenStatic || !equal(cert.staticKey, provenStatic))
    return `${roleName(identity.role)} ${identity.name}'s certificate is for another static key than ` +
      'the one it proved in the handshake';
  const nowSeconds = BigInt(Math.floor(now / 1000));
  if (cert.notAfter < nowSeconds)
    return `${roleName(identity.role)} ${identity.name}'s certificate expired at ` +
      `${new Date(Number(cert.notAfter) * 1000).toISOString()}`;
  return null;
}
