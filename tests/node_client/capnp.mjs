// A small Cap'n Proto encoder and decoder: only what this client needs (structs, text, data,
// lists of text, of UInt32 and of structs), in the standard stream format (docs/protocol.md,
// "rpc frames"). Writes one segment; reads any number, far pointers included.

const WORD = 8;

// ---- building --------------------------------------------------------------------------

export class MessageBuilder {
  constructor() {
    this.buf = new Uint8Array(1024);
    this.words = 1; // word 0: the root pointer
  }

  alloc(words) {
    const at = this.words;
    this.words += words;
    while (this.words * WORD > this.buf.length) {
      const bigger = new Uint8Array(this.buf.length * 2);
      bigger.set(this.buf);
      this.buf = bigger;
    }
    return at;
  }

  view() {
    return new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  initRoot(dataWords, ptrCount) {
    return this.newStruct(0, dataWords, ptrCount);
  }

  // A struct of the given size, pointed at from the pointer word `ptrWord`.
  newStruct(ptrWord, dataWords, ptrCount) {
    const at = this.alloc(dataWords + ptrCount);
    this.structPointer(ptrWord, at, dataWords, ptrCount);
    return new StructBuilder(this, at, dataWords, ptrCount);
  }

  structPointer(ptrWord, target, dataWords, ptrCount) {
    const v = this.view();
    v.setUint32(ptrWord * WORD, ((target - ptrWord - 1) << 2) >>> 0, true);
    v.setUint16(ptrWord * WORD + 4, dataWords, true);
    v.setUint16(ptrWord * WORD + 6, ptrCount, true);
  }

  listPointer(ptrWord, target, elementSize, count) {
    const v = this.view();
    v.setUint32(ptrWord * WORD, (((target - ptrWord - 1) << 2) | 1) >>> 0, true);
    v.setUint32(ptrWord * WORD + 4, ((count << 3) | elementSize) >>> 0, true);
  }

  // The frame: segment table (one segment) then the segment.
  frame() {
    const out = new Uint8Array(8 + this.words * WORD);
    const v = new DataView(out.buffer);
    v.setUint32(0, 0, true); // segment count - 1
    v.setUint32(4, this.words, true);
    out.set(this.buf.subarray(0, this.words * WORD), 8);
    return out;
  }
}

export class StructBuilder {
  constructor(msg, at, dataWords, ptrCount) {
    Object.assign(this, { msg, at, dataWords, ptrCount });
  }

  dataByte(offset) {
    return this.at * WORD + offset;
  }

  ptrWord(index) {
    return this.at + this.dataWords + index;
  }

  // Scalars: `offset` in units of the field's size, as capnp's schema gives it.
  setU16(offset, v) { this.msg.view().setUint16(this.dataByte(offset * 2), v, true); }
  setU32(offset, v) { this.msg.view().setUint32(this.dataByte(offset * 4), v >>> 0, true); }
  setI32(offset, v) { this.msg.view().setInt32(this.dataByte(offset * 4), v, true); }
  setU64(offset, v) { this.msg.view().setBigUint64(this.dataByte(offset * 8), BigInt(v), true); }
  setBool(bit, v) {
    const at = this.dataByte(bit >> 3);
    const view = this.msg.view();
    const mask = 1 << (bit & 7);
    view.setUint8(at, v ? view.getUint8(at) | mask : view.getUint8(at) & ~mask);
  }

  setBytes(index, bytes, nulTerminated) {
    const size = bytes.length + (nulTerminated ? 1 : 0);
    const target = this.msg.alloc(Math.ceil(size / WORD));
    this.msg.buf.set(bytes, target * WORD);
    this.msg.listPointer(this.ptrWord(index), target, 2, size);
  }

  setText(index, text) { this.setBytes(index, new TextEncoder().encode(text), true); }
  setData(index, bytes) { this.setBytes(index, bytes, false); }

  initStruct(index, dataWords, ptrCount) {
    return this.msg.newStruct(this.ptrWord(index), dataWords, ptrCount);
  }

  setU32List(index, values) {
    const target = this.msg.alloc(Math.ceil((values.length * 4) / WORD));
    const v = this.msg.view();
    values.forEach((x, i) => v.setUint32(target * WORD + i * 4, x >>> 0, true));
    this.msg.listPointer(this.ptrWord(index), target, 4, values.length);
  }

  setTextList(index, texts) {
    const target = this.msg.alloc(texts.length);
    this.msg.listPointer(this.ptrWord(index), target, 6, texts.length);
    texts.forEach((t, i) => new StructBuilder(this.msg, target + i, 0, 1).setText(0, t));
  }

  // A list of structs (inline composite); returns a builder for each element.
  initStructList(index, count, dataWords, ptrCount) {
    const size = dataWords + ptrCount;
    const tag = this.msg.alloc(1 + count * size);
    this.msg.listPointer(this.ptrWord(index), tag, 7, count * size);
    const v = this.msg.view();
    v.setUint32(tag * WORD, (count << 2) >>> 0, true); // the tag: a struct pointer whose offset is the count
    v.setUint16(tag * WORD + 4, dataWords, true);
    v.setUint16(tag * WORD + 6, ptrCount, true);
    return Array.from({ length: count },
      (_, i) => new StructBuilder(this.msg, tag + 1 + i * size, dataWords, ptrCount));
  }
}

// ---- reading ---------------------------------------------------------------------------

// Splits one frame off the front of `bytes`: { segments, size } or null when incomplete.
export function splitFrame(bytes, maxBytes) {
  if (bytes.length < 4) return null;
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const count = v.getUint32(0, true) + 1;
  if (count > 511) throw new Error(`a frame of ${count} segments`);
  const table = 4 + count * 4 + (count % 2 === 0 ? 4 : 0);
  if (bytes.length < table) return null;
  let size = table;
  const sizes = [];
  for (let i = 0; i < count; i++) {
    sizes.push(v.getUint32(4 + i * 4, true) * WORD);
    size += sizes[i];
  }
  if (size > maxBytes) throw new Error(`a frame of ${size} bytes`);
  if (bytes.length < size) return null;
  const segments = [];
  let at = table;
  for (const s of sizes) {
    segments.push(new DataView(bytes.buffer, bytes.byteOffset + at, s));
    at += s;
  }
  return { segments, size };
}

export class MessageReader {
  constructor(segments) {
    this.segments = segments;
    this.budget = 4 * segments.reduce((n, s) => n + s.byteLength / WORD, 0); // traversal limit
  }

  root() {
    return this.readStruct(0, 0, 0) ?? EMPTY;
  }

  // Follows the pointer at word `word` of segment `seg`, far pointers resolved: {seg, lo, hi,
  // target} (the pointer's two halves and the word it points at), or null for a null pointer.
  resolve(seg, word) {
    const v = this.segments[seg];
    if (!v || (word + 1) * WORD > v.byteLength) throw new Error('pointer out of bounds');
    const lo = v.getUint32(word * WORD, true);
    const hi = v.getUint32(word * WORD + 4, true);
    if (lo === 0 && hi === 0) return null;
    if ((lo & 3) !== 2) return { seg, lo, hi, target: word + 1 + (lo >> 2) };
    const padSeg = hi;
    const pad = lo >>> 3;
    if (!(lo & 4)) return this.resolve(padSeg, pad); // single far: the pad is the pointer
    // double far: a far pointer to the content, then a tag with the type
    const pv = this.segments[padSeg];
    if (!pv) throw new Error('far pointer out of bounds');
    const contentLo = pv.getUint32(pad * WORD, true);
    const tagLo = pv.getUint32(pad * WORD + WORD, true);
    const tagHi = pv.getUint32(pad * WORD + WORD + 4, true);
    return { seg: pv.getUint32(pad * WORD + 4, true), lo: tagLo, hi: tagHi, target: contentLo >>> 3 };
  }

  spend(words) {
    this.budget -= words;
    if (this.budget < 0) throw new Error('traversal limit exceeded');
  }

  readStruct(seg, word, depth) {
    if (depth > 16) throw new Error('nesting limit exceeded');
    const p = this.resolve(seg, word);
    if (!p) return null;
    if ((p.lo & 3) !== 0) throw new Error('expected a struct pointer');
    const dataWords = p.hi & 0xffff;
    const ptrCount = p.hi >>> 16;
    this.spend(dataWords + ptrCount);
    const v = this.segments[p.seg];
    if ((p.target + dataWords + ptrCount) * WORD > v.byteLength || p.target < 0)
      throw new Error('struct out of bounds');
    return new StructReader(this, p.seg, p.target, dataWords, ptrCount, depth);
  }

  readBytes(seg, word) {
    const p = this.resolve(seg, word);
    if (!p) return new Uint8Array(0);
    if ((p.lo & 3) !== 1 || (p.hi & 7) !== 2) throw new Error('expected a byte list');
    const count = p.hi >>> 3;
    this.spend(Math.ceil(count / WORD));
    const v = this.segments[p.seg];
    if (p.target * WORD + count > v.byteLength) throw new Error('list out of bounds');
    return new Uint8Array(v.buffer, v.byteOffset + p.target * WORD, count);
  }
}

export class StructReader {
  constructor(msg, seg, at, dataWords, ptrCount, depth) {
    Object.assign(this, { msg, seg, at, dataWords, ptrCount, depth });
  }

  // Fields beyond the struct's size read as their defaults (an older, smaller struct).
  num(byteOffset, size, get) {
    if (!this.msg || byteOffset + size > this.dataWords * WORD) return 0;
    return get.call(this.msg.segments[this.seg], this.at * WORD + byteOffset, true);
  }

  u16(offset) { return this.num(offset * 2, 2, DataView.prototype.getUint16); }
  u32(offset) { return this.num(offset * 4, 4, DataView.prototype.getUint32); }
  i32(offset) { return this.num(offset * 4, 4, DataView.prototype.getInt32); }
  u64(offset) { return this.num(offset * 8, 8, DataView.prototype.getBigUint64); }
  bool(bit) { return ((this.num(bit >> 3, 1, DataView.prototype.getUint8) >> (bit & 7)) & 1) === 1; }

  hasPtr(index) { return this.msg && index < this.ptrCount; }
  data(index) { return this.hasPtr(index) ? this.msg.readBytes(this.seg, this.at + this.dataWords + index) : new Uint8Array(0); }
  text(index) {
    const b = this.data(index);
    return new TextDecoder().decode(b.length && b[b.length - 1] === 0 ? b.subarray(0, -1) : b);
  }
  struct(index) {
    if (!this.hasPtr(index)) return EMPTY;
    return this.msg.readStruct(this.seg, this.at + this.dataWords + index, this.depth + 1) ?? EMPTY;
  }
}

const EMPTY = new StructReader(null, 0, 0, 0, 0, 0);
