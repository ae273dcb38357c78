// Sealed records (docs/protocol.md, "Records"), XChaCha20-Poly1305 secretstream (cipher 0x01):
// each direction is [24-byte stream header] then records N (u32 BE) | body, N = plaintext + 17.

import sodium from 'libsodium-wrappers';

export const MAX_PLAINTEXT = 65536;
const OVERHEAD = 17;
const HEADER = 24;
const TAG_MESSAGE = 0x00;
const TAG_FINAL = 0x03;

const lengthBytes = (n) => Uint8Array.from([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);

function join(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

export class RecordWriter {
  constructor(key) {
    const { state, header } = sodium.crypto_secretstream_xchacha20poly1305_init_push(key);
    this.state = state;
    this.header = header; // sent before the first record
    this.finished = false;
  }

  record(plaintext, tag) {
    const n = lengthBytes(plaintext.length + OVERHEAD);
    const body = sodium.crypto_secretstream_xchacha20poly1305_push(this.state, plaintext, n, tag);
    const parts = [n, body];
    if (this.header) { parts.unshift(this.header); this.header = null; }
    return join(parts);
  }

  // The bytes to send for `plaintext`: records of at most 64 KiB of it, never an empty one.
  seal(plaintext) {
    if (this.finished) throw new Error('the link is closed');
    const parts = [];
    for (let at = 0; at < plaintext.length; at += MAX_PLAINTEXT)
      parts.push(this.record(plaintext.subarray(at, at + MAX_PLAINTEXT), TAG_MESSAGE));
    return join(parts);
  }

  // The final record: empty, tagged final. Nothing follows it.
  final() {
    this.finished = true;
    return this.record(new Uint8Array(0), TAG_FINAL);
  }
}

export class RecordReader {
  constructor(key) {
    this.key = key;
    this.state = null;
    this.pending = new Uint8Array(0);
    this.ended = false; // the final record has come
  }

  // Takes bytes off the wire; returns the plaintext of the records they complete. Throws on
  // anything the document says drops the link.
  push(bytes) {
    let buf = join([this.pending, bytes]);
    const out = [];
    for (;;) {
      if (!this.state) {
        if (buf.length < HEADER) break;
        this.state = sodium.crypto_secretstream_xchacha20poly1305_init_pull(buf.subarray(0, HEADER), this.key);
        buf = buf.subarray(HEADER);
        continue;
      }
      if (buf.length < 4) break;
      const n = ((buf[0] << 24) | (buf[1] << 16) | (buf[2] << 8) | buf[3]) >>> 0;
      if (n < OVERHEAD || n > MAX_PLAINTEXT + OVERHEAD) throw new Error(`a record of length ${n}`);
      if (buf.length < 4 + n) break;
      if (this.ended) throw new Error('a record after the final record');
      const r = sodium.crypto_secretstream_xchacha20poly1305_pull(this.state, buf.subarray(4, 4 + n),
        buf.subarray(0, 4));
      if (!r) throw new Error('a record that does not authenticate');
      if (r.tag === TAG_FINAL) this.ended = true;
      else if (r.tag !== TAG_MESSAGE) throw new Error(`a record with tag ${r.tag}`);
      if (r.message.length) out.push(r.message);
      buf = buf.subarray(4 + n);
    }
    this.pending = buf.slice();
    return out;
  }
}
