// One sealed link to an agent: TCP, the handshake as initiator, then envelopes in records.

import net from 'node:net';
import { initiate, initiate3, ROLE, HandshakeRefused } from './handshake.mjs';
import { RecordReader, RecordWriter } from './records.mjs';
import { FrameReader } from './envelope.mjs';

export const HANDSHAKE_TIMEOUT_MS = 5000;

// Exact-size reads over a socket's 'data' events, for the handshake.
class ByteQueue {
  constructor(socket) {
    this.buf = new Uint8Array(0);
    this.waiter = null;
    this.closed = null;
    socket.on('data', (d) => { this.buf = Buffer.concat([this.buf, d]); this.wake(); });
    socket.on('end', () => { this.closed ??= 'the agent closed the connection'; this.wake(); });
    socket.on('close', () => { this.closed ??= 'the connection closed'; this.wake(); });
    socket.on('error', (e) => { this.closed = e.message; this.wake(); });
  }

  wake() { const w = this.waiter; this.waiter = null; w?.(); }

  async read(n) {
    while (this.buf.length < n) {
      if (this.closed) throw new HandshakeRefused('closed', `during the handshake: ${this.closed}`);
      await new Promise((resolve) => { this.waiter = resolve; });
    }
    const out = Uint8Array.from(this.buf.subarray(0, n));
    this.buf = this.buf.subarray(n);
    return out;
  }
}

export class Link {
  // Connects and runs the handshake (version 3 unless `handshake` is 2; `identity` and
  // `authority` for version 3's certificates); resolves once established.
  static async open({ host, port, clusterKey, name, handshake = 3, identity, authority }) {
    const socket = net.connect({ host, port });
    socket.setNoDelay(true);
    await new Promise((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const queue = new ByteQueue(socket);
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new HandshakeRefused('timeout', 'the handshake took over 5 s')),
        HANDSHAKE_TIMEOUT_MS);
    });
    try {
      const io = { read: (n) => queue.read(n), write: (b) => socket.write(b) };
      const run = handshake === 2
        ? initiate(io, { clusterKey, role: ROLE.launcher, name })
        : initiate3(io, { clusterKey, role: ROLE.launcher, name, identity, authority });
      const hs = await Promise.race([run, timeout]);
      if (hs.peer.role !== ROLE.agent)
        throw new HandshakeRefused('role', `the peer proved role ${hs.peer.role}, not an agent`);
      socket.removeAllListeners('data');
      socket.removeAllListeners('end');
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      return new Link(socket, hs, queue.buf);
    } catch (e) {
      socket.destroy();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  constructor(socket, hs, leftover) {
    this.socket = socket;
    this.peerName = hs.peer.name;
    this.writer = new RecordWriter(hs.tx);
    this.reader = new RecordReader(hs.rx);
    this.frames = new FrameReader();
    this.onMessage = () => {};
    this.onClose = () => {};
    this.closed = false;
    this.nextRequestId = 1n;
    this.heardAny = false;
    socket.on('data', (d) => this.receive(d));
    // The initiator is established once it sends M3; a responder that refuses M3 (handshake 3:
    // `key`, `certificate`, `malformed`) closes without a word, which shows only here.
    const why = (what) => (this.heardAny ? what
      : `the agent closed the link before sending anything (${what}): it refused our M3 or ` +
        'left; its log says why (with certificates, most likely ours)');
    socket.on('error', (e) => this.lost(why(e.message)));
    socket.on('close', () => this.lost(this.reader.ended ? null
      : why('the peer\'s stream ended without its final record')));
    if (leftover.length) queueMicrotask(() => this.receive(leftover));
  }

  receive(bytes) {
    if (this.closed) return;
    this.heardAny = true;
    try {
      for (const plain of this.reader.push(bytes))
        for (const message of this.frames.push(plain)) this.onMessage(message);
    } catch (e) {
      this.lost(e.message);
      this.socket.destroy();
    }
  }

  lost(why) {
    if (this.closed) return;
    this.closed = true;
    this.onClose(why);
  }

  requestId() { return this.nextRequestId++; }

  send(frameBytes) {
    if (!this.closed) this.socket.write(this.writer.seal(frameBytes));
  }

  // A clean close: the final record, then the TCP close.
  close() {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    return new Promise((resolve) => {
      this.socket.end(this.writer.final(), resolve);
      this.socket.once('close', resolve);
    });
  }
}
