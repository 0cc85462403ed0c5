/**
 * Reads a few numeric columns of a RowBinary row (sample-table.ts order) into a caller's array,
 * allocating nothing: for the hooks that run on every snapshot the writer puts (the alerts' e-stop and
 * battery, the usage meter's position), once per robot per snapshot interval.
 *
 * Why not RowReader (row-rowbinary.ts): it makes a DataView, an object of values, a BigInt per Int64
 * and a string per String column on each read. At 100 robots x 10 Hz those reads were about a fifth of
 * all the gateway allocated, and at that low a rate V8 releases its young generation's
 * pages after every scavenge, so every page allocated costs a page fault (bench/notes/telemetry-ingest.md, "Snapshot
 * hooks without allocation"). Hand-written because that is all it does; the walk is derived from
 * SAMPLE_FIELDS, so the field table stays the one definition of the row's layout.
 */
import { SAMPLE_FIELDS, type RowType } from './sample-table.js';

/** Column types read as numbers (Int64 exact below 2^53; UInt8 booleans as 0/1; Enum8 as its value). */
const NUMERIC: ReadonlySet<RowType> = new Set<RowType>(['Int64', 'Float64', 'Float32', 'Int32', 'UInt8', 'Enum8']);

// The IEEE reads copy the bytes here and read them back in the platform's byte order.
const scratch = new ArrayBuffer(8);
const scratchBytes = new Uint8Array(scratch);
const scratchF64 = new Float64Array(scratch);
const scratchF32 = new Float32Array(scratch);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function loadScratch(bytes: Uint8Array, p: number, n: number): void {
  if (LITTLE_ENDIAN) for (let i = 0; i < n; i++) scratchBytes[i] = bytes[p + i]!;
  else for (let i = 0; i < n; i++) scratchBytes[n - 1 - i] = bytes[p + i]!;
}

function u32(bytes: Uint8Array, p: number): number {
  return (bytes[p]! | (bytes[p + 1]! << 8) | (bytes[p + 2]! << 16) | (bytes[p + 3]! << 24)) >>> 0;
}

/** Reads the columns named at construction from rows, stepping over the columns before them. */
export class RowScalarReader {
  /** Each column of the table up to the last one asked for. */
  private readonly types: readonly RowType[];
  /** Where each of those columns goes in `out` (-1: stepped over). */
  private readonly slots: Int32Array;
  /** The read position during read() (a field, not a returned pair: nothing is allocated). */
  private pos = 0;

  /** @throws Error on no columns, a repeated one, one the table does not have or one that is not numeric */
  constructor(columns: readonly string[]) {
    if (columns.length === 0) throw new Error('no columns to read');
    const wanted = new Map(columns.map((c, i) => [c, i]));
    if (wanted.size !== columns.length) throw new Error(`a column is named twice: ${columns.join(', ')}`);
    for (const c of columns) {
      const f = SAMPLE_FIELDS.find((x) => x.column === c);
      if (f === undefined) throw new Error(`no column ${c} in the sample table`);
      if (!NUMERIC.has(f.rowType)) throw new Error(`column ${c} is ${f.rowType}, not a number`);
    }
    let last = -1;
    SAMPLE_FIELDS.forEach((f, i) => {
      if (wanted.has(f.column)) last = i;
    });
    const fields = SAMPLE_FIELDS.slice(0, last + 1);
    this.types = fields.map((f) => f.rowType);
    this.slots = Int32Array.from(fields, (f) => wanted.get(f.column) ?? -1);
  }

  /**
   * Reads the row that starts at `bytes[start]` into `out` (`out[i]` for the i-th column named at
   * construction). Returns false when the row ends before the last of them or has a corrupt length
   * on the way (`out` is then partly written); bytes after it are not looked at.
   */
  read(bytes: Uint8Array, start: number, out: Float64Array): boolean {
    const end = bytes.length;
    this.pos = start;
    const types = this.types;
    for (let i = 0; i < types.length; i++) {
      const type = types[i]!;
      const slot = this.slots[i]!;
      let size: number;
      switch (type) {
        case 'String': {
          // NaN (the row ended inside the length, or it is corrupt) fails the check too.
          const n = this.length(bytes, end);
          if (!(n <= end - this.pos)) return false;
          this.pos += n;
          continue;
        }
        case 'Array(String)': {
          // Each element takes at least one byte: a corrupt count cannot make a long loop.
          const count = this.length(bytes, end);
          if (!(count <= end - this.pos)) return false;
          for (let k = 0; k < count; k++) {
            const n = this.length(bytes, end);
            if (!(n <= end - this.pos)) return false;
            this.pos += n;
          }
          continue;
        }
        case 'Int64':
        case 'Float64':
          size = 8;
          break;
        case 'Float32':
        case 'Int32':
          size = 4;
          break;
        case 'UInt8':
        case 'Enum8':
          size = 1;
          break;
      }
      const p = this.pos;
      if (p + size > end) return false;
      if (slot !== -1) {
        switch (type) {
          case 'Int64':
            // Two's complement: the high word signed.
            out[slot] = (u32(bytes, p + 4) | 0) * 4294967296 + u32(bytes, p);
            break;
          case 'Float64':
            loadScratch(bytes, p, 8);
            out[slot] = scratchF64[0]!;
            break;
          case 'Float32':
            loadScratch(bytes, p, 4);
            out[slot] = scratchF32[0]!;
            break;
          case 'Int32':
            out[slot] = u32(bytes, p) | 0;
            break;
          default:
            // UInt8 (a boolean 0/1) and Enum8.
            out[slot] = bytes[p]!;
        }
      }
      this.pos = p + size;
    }
    return true;
  }

  /**
   * An unsigned LEB128 length at `pos`, which it moves past it; NaN when the row ends inside it or it
   * takes more than 5 bytes (a length of a row never does: more would overflow to Infinity or NaN).
   */
  private length(bytes: Uint8Array, end: number): number {
    let v = 0;
    let mul = 1;
    for (let k = 0; k < 5; k++) {
      if (this.pos >= end) return Number.NaN;
      const b = bytes[this.pos++]!;
      v += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return v;
      mul *= 128;
    }
    return Number.NaN;
  }
}
