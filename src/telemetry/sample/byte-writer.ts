/**
 * A growable little-endian byte buffer for the decode worker's outputs (RowBinary rows, live JSON).
 *
 * Why not strings + Buffer.concat: each output is handed back to the main thread as one transferable
 * ArrayBuffer, so it is written in place once. Growth doubles; the size is bounded by the task (the
 * ingest bounds frames per task), so no separate cap is kept here.
 */
const encoder = new TextEncoder();

export class ByteWriter {
  private buf: Uint8Array;
  private view: DataView;
  /** Bytes written so far. */
  pos = 0;

  constructor(initialBytes = 64 * 1024) {
    this.buf = new Uint8Array(new ArrayBuffer(Math.max(64, initialBytes)));
    this.view = new DataView(this.buf.buffer);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(new ArrayBuffer(size));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  i32(v: number): void {
    this.ensure(4);
    this.view.setInt32(this.pos, v, true);
    this.pos += 4;
  }

  /** Int64 from a JS number, truncated (exact up to 2^53, plenty for epoch milliseconds); no BigInt. */
  i64(v: number): void {
    const t = Math.trunc(v);
    if (Number.isSafeInteger(t)) {
      // Two's complement split without BigInt: low word by modulo, high word by floor division.
      const lo = t >>> 0 === t ? t : ((t % 4294967296) + 4294967296) % 4294967296;
      this.i64parts(lo, Math.floor(t / 4294967296));
      return;
    }
    this.ensure(8);
    this.view.setBigInt64(this.pos, BigInt.asIntN(64, BigInt(Number.isFinite(t) ? t : 0)), true);
    this.pos += 8;
  }

  /** Int64 from its two's complement halves (`lo` unsigned, `hi` signed or unsigned 32-bit). */
  i64parts(lo: number, hi: number): void {
    this.ensure(8);
    this.view.setUint32(this.pos, lo >>> 0, true);
    this.view.setInt32(this.pos + 4, hi | 0, true);
    this.pos += 8;
  }

  /** Int64 from a bigint (two's complement, low 64 bits). */
  i64big(v: bigint): void {
    this.ensure(8);
    this.view.setBigInt64(this.pos, BigInt.asIntN(64, v), true);
    this.pos += 8;
  }

  /** Float64 with every NaN written as the canonical quiet NaN (payloads differ between readers). */
  f64c(v: number): void {
    this.ensure(8);
    if (v !== v) {
      this.view.setUint32(this.pos, 0, true);
      this.view.setUint32(this.pos + 4, 0x7ff80000, true);
    } else {
      this.view.setFloat64(this.pos, v, true);
    }
    this.pos += 8;
  }

  /** Float32 with every NaN written as the canonical quiet NaN. */
  f32c(v: number): void {
    this.ensure(4);
    if (v !== v) this.view.setUint32(this.pos, 0x7fc00000, true);
    else this.view.setFloat32(this.pos, v, true);
    this.pos += 4;
  }

  /** Unsigned LEB128, as RowBinary uses for string and array lengths. */
  varUint(v: number): void {
    this.ensure(10);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  /** Raw UTF-8 of `s`, returns the number of bytes written. */
  utf8(s: string): number {
    const start = this.pos;
    const len = s.length;
    this.ensure(len * 3);
    // Short ASCII strings (ids, modes, numbers) are the common case: a plain loop beats encodeInto's call cost.
    if (len < 64) {
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        this.buf[this.pos + i] = c;
      }
      if (i === len) {
        this.pos += len;
        return len;
      }
    }
    const { written } = encoder.encodeInto(s, this.buf.subarray(start));
    this.pos = start + written;
    return written;
  }

  /** Bytes of a UTF-8 string written with a length prefix (RowBinary String). */
  rbString(s: string): void {
    // Reserve the worst case, write, then fix the prefix if the varint is shorter than reserved.
    const len = s.length;
    if (len < 43) {
      // 42 UTF-16 units * 3 bytes = 126 < 128: the length always fits one varint byte.
      this.ensure(1 + len * 3);
      const at = this.pos++;
      this.buf[at] = this.utf8(s);
      return;
    }
    const bytes = encoder.encode(s);
    this.varUint(bytes.length);
    this.raw(bytes);
  }

  /** Copies `src[start, end)` (a view of another buffer) in. */
  copy(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.ensure(n);
    if (n < 32) {
      // Short ids and strings: a loop beats the call into `set`.
      const b = this.buf;
      let p = this.pos;
      for (let i = start; i < end; i++) b[p++] = src[i]!;
    } else {
      this.buf.set(src.subarray(start, end), this.pos);
    }
    this.pos += n;
  }

  /** ASCII text (numbers, keys): one byte per UTF-16 unit; the caller guarantees < 0x80. */
  ascii(s: string): void {
    const n = s.length;
    this.ensure(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** The bytes written so far, as a view (valid until the next write or reset: copy to keep). */
  written(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  /**
   * A copy of the written bytes: into `into` when they fit (a task's shared rows slot), else a
   * transferable buffer of their exact size. The writer is reset and keeps its own buffer.
   */
  copyOut(into?: Uint8Array): Uint8Array {
    let out: Uint8Array;
    if (into !== undefined && into.length >= this.pos) {
      out = into.subarray(0, this.pos);
      out.set(this.buf.subarray(0, this.pos));
    } else {
      out = this.buf.slice(0, this.pos);
    }
    this.pos = 0;
    return out;
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }
}
