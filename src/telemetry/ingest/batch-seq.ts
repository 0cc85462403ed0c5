/**
 * Reads a TelemetryBatch's `seq` (field 2) and `epoch` (field 3) wherever they stand in its raw
 * encoding, without decoding a sample: batch-level work on the main thread. Standard protobuf
 * libraries write fields in number order, so the samples (field 1) come first; the walk reads each
 * top-level tag, skips a sample by its length, and reads the two varints. Its cost is one tag and one
 * length per sample (bench/micro/batch-seq.mjs).
 *
 * The walk follows the decoders' (and protobuf-es's) rules, so a batch it calls sequenced is one they
 * read the same way: a known field is read by its declared type whatever the wire type in its tag,
 * a repeated field's last value wins, unknown fields of wire types 0, 1, 2, 3 and 5 are skipped.
 * Anything they would reject at the top level (a bad tag, a field past the end, wire type 4, 6 or
 * 7, a varint over 10 bytes) makes the batch unsequenced: the decoder then rejects it and counts it
 * corrupt, as before. A malformed sample is the decoder's to find: it is not looked into here.
 *
 * A 10-byte varint's bits past 64 are dropped (protobuf-es keeps a uint64's low 64 bits), so
 * `2^64 + 7` reads as 7, as it reads it. Values above 2^53 are treated as unsequenced: they
 * cannot be exact JavaScript numbers, and no agent needs them (a seq per batch at 1 kHz takes
 * 285,000 years to get there).
 *
 * Bound: every field advances the position by at least one byte, so a walk is at most one step per
 * byte of a batch, and a batch is at most the robot link's message limit (4 MiB).
 */

const EMPTY = new Uint8Array(0);

/** Nested groups skipped at most this deep (protobuf-es's recursion budget less the batch's level). */
const GROUP_BUDGET = 99;

/** One reader per ingest: `seq` and `epoch` hold the last batch's values after {@link read}. */
export class BatchSeqReader {
  seq = 0;
  epoch = 0;
  private u8: Uint8Array = EMPTY;
  private pos = 0;
  private end = 0;
  /** A varint's value as a number; -1 when it is above 2^53. Set by {@link varint}. */
  private value = 0;

  /** True when the batch is well formed at its top level and carries a non-zero `seq`. */
  read(bytes: Uint8Array): boolean {
    this.u8 = bytes;
    this.end = bytes.length;
    let seq = 0;
    let epoch = 0;
    const end = bytes.length;
    let pos = 0;
    while (pos < end) {
      const b = bytes[pos]!;
      // The common case, a sample with a one-byte tag and a length under 2^14: read here, without calls.
      if (b === 0x0a && pos + 2 < end) {
        const l0 = bytes[pos + 1]!;
        if (l0 < 0x80) {
          pos += 2 + l0;
          continue;
        }
        const l1 = bytes[pos + 2]!;
        if (l1 < 0x80) {
          pos += 3 + (l0 & 0x7f) + l1 * 128;
          continue;
        }
      }
      this.pos = pos;
      const t = this.tag();
      if (t < 0) return this.none();
      const field = t >>> 3;
      if (field === 2 || field === 3) {
        if (!this.varint()) return this.none();
        if (field === 2) seq = this.value;
        else epoch = this.value;
      } else if (field === 1) {
        // A sample: the decoders read a length whatever the wire type; skipped unread.
        if (!this.skipLength()) return this.none();
      } else if (!this.skip(t & 7, field, GROUP_BUDGET)) {
        return this.none();
      }
      pos = this.pos;
    }
    // A sample's length past the end (the fast path does not check each one).
    if (pos > end) return this.none();
    this.u8 = EMPTY;
    if (seq <= 0 || epoch < 0) return this.none();
    this.seq = seq;
    this.epoch = epoch;
    return true;
  }

  private none(): boolean {
    // Not kept past the call: the batch (a view into a reused read buffer, or a large one) is the caller's.
    this.u8 = EMPTY;
    this.seq = 0;
    this.epoch = 0;
    return false;
  }

  /** A tag: fieldNo * 8 + wireType, or -1 when it is malformed (as the decoders' tag()). */
  private tag(): number {
    const u8 = this.u8;
    if (this.pos >= this.end) return -1;
    let t = u8[this.pos]!;
    if (t < 0x80) {
      // The common case: a one-byte tag.
      this.pos++;
      return t >>> 3 === 0 || (t & 7) > 5 ? -1 : t;
    }
    t = 0;
    for (let i = 0; ; i++) {
      if (this.pos >= this.end || i === 5) return -1;
      const b = u8[this.pos++]!;
      if (i === 4 && b > 0x0f) return -1;
      t += (b & 0x7f) * 2 ** (7 * i);
      if (b < 0x80) break;
    }
    const field = Math.floor(t / 8);
    const wireType = t & 7;
    if (field <= 0 || wireType > 5) return -1;
    return t;
  }

  /** A varint of at most 10 bytes into {@link value} (-1 above 2^53); false when malformed. */
  private varint(): boolean {
    const u8 = this.u8;
    let value = 0;
    let mul = 1;
    for (let i = 0; ; i++) {
      if (this.pos >= this.end || i === 10) return false;
      const b = u8[this.pos++]!;
      // The tenth byte holds bit 63 alone: higher bits are dropped, as protobuf-es keeps a uint64's
      // low 64 bits.
      value += (i === 9 ? b & 0x01 : b & 0x7f) * mul;
      if (b < 0x80) break;
      mul *= 128;
    }
    this.value = Number.isSafeInteger(value) ? value : -1;
    return true;
  }

  /** A length (its low 32 bits, as the decoders read it) and that many bytes. */
  private skipLength(): boolean {
    const u8 = this.u8;
    let len = 0;
    for (let i = 0; ; i++) {
      if (this.pos >= this.end || i === 10) return false;
      const b = u8[this.pos++]!;
      if (i < 4) len += (b & 0x7f) * 2 ** (7 * i);
      else if (i === 4) len += (b & 0x0f) * 2 ** 28;
      if (b < 0x80) break;
    }
    this.pos += len;
    return this.pos <= this.end;
  }

  /** Skips one unknown field; false when it is malformed or runs past the end. */
  private skip(wireType: number, field: number, budget: number): boolean {
    switch (wireType) {
      case 0:
        // Any number of continuation bytes, as the decoders skip an unknown varint.
        while (this.pos < this.end) {
          if (this.u8[this.pos++]! < 0x80) return true;
        }
        return false;
      case 1:
        this.pos += 8;
        return this.pos <= this.end;
      case 5:
        this.pos += 4;
        return this.pos <= this.end;
      case 2:
        return this.skipLength();
      case 3:
        if (budget <= 0) return false;
        for (;;) {
          const t = this.tag();
          if (t < 0) return false;
          if ((t & 7) === 4) return t >>> 3 === field;
          if (!this.skip(t & 7, t >>> 3, budget - 1)) return false;
        }
      default:
        return false;
    }
  }
}
