/**
 * RowBinary rows driven by the field table (sample-table.ts): the writer of the reference decoder and
 * the reader of snapshots. RowBinary is the cheapest format for the server to parse (no text parsing
 * of floats), and it is identical on 18.16 and 24.x because `ts` is a server-side DEFAULT.
 *
 * Encoding rules every decoder follows: Int64 exact (two's complement); Float64/Float32 as IEEE bits
 * with every NaN written as the canonical quiet NaN; UInt8 booleans 0/1; Enum8 the level value, 0 when
 * out of range; strings and arrays with an unsigned LEB128 length.
 */
import type { ByteWriter } from './byte-writer.js';
import type { RowValue, RowValues } from './row-values.js';
import { HEALTH_LEVEL_NAMES, SAMPLE_FIELDS, type RowType } from './sample-table.js';

/** Robot and fleet ids pre-encoded once per task (length prefix + UTF-8), reused for every row. */
export function encodeRowBinaryString(s: string): Uint8Array {
  const bytes = new TextEncoder().encode(s);
  const prefix: number[] = [];
  let v = bytes.length;
  while (v >= 0x80) {
    prefix.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  prefix.push(v);
  const out = new Uint8Array(prefix.length + bytes.length);
  out.set(prefix, 0);
  out.set(bytes, prefix.length);
  return out;
}

function writeValue(w: ByteWriter, type: RowType, v: RowValue): void {
  switch (type) {
    case 'String':
      w.rbString(v as string);
      return;
    case 'Int64':
      if (typeof v === 'bigint') w.i64big(v);
      else w.i64(v as number);
      return;
    case 'Float64':
      w.f64c(v as number);
      return;
    case 'Float32':
      w.f32c(v as number);
      return;
    case 'UInt8':
      w.u8(v === true ? 1 : 0);
      return;
    case 'Int32':
      w.i32(v as number);
      return;
    case 'Enum8': {
      const level = v as number;
      w.u8(level >= 0 && level < HEALTH_LEVEL_NAMES.length ? level : 0);
      return;
    }
    case 'Array(String)': {
      const list = v as readonly string[];
      w.varUint(list.length);
      for (const s of list) w.rbString(s);
      return;
    }
  }
}

/** Appends one row: every column of the table from `values` (keyed by column name). */
export function writeRowFromValues(w: ByteWriter, values: RowValues): void {
  for (const f of SAMPLE_FIELDS) writeValue(w, f.rowType, values[f.column]!);
}

const utf8 = new TextDecoder();

/** A little-endian reader over one row. */
class RowReader {
  private readonly view: DataView;
  pos = 0;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  varUint(): number {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = this.bytes[this.pos++];
      if (b === undefined) throw new Error('row ends inside a length');
      v += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return v;
      mul *= 128;
      // Lengths in a row take at most 5 bytes; more would make them NaN or Infinity, which the
      // bounds checks after them do not catch.
      if (mul >= 2 ** 35) throw new Error('row has a length of more than 5 bytes');
    }
  }

  string(): string {
    const n = this.varUint();
    const end = this.pos + n;
    if (end > this.bytes.length) throw new Error('row ends inside a string');
    // Ids, modes and fault codes are short ASCII: one fromCharCode call beats a decoder call (the
    // Foxglove output reads every row of a watched robot: foxglove-output.ts).
    if (n <= 64) {
      const b = this.bytes.subarray(this.pos, end);
      let ascii = true;
      for (let i = 0; i < n; i++) if (b[i]! >= 0x80) { ascii = false; break; }
      if (ascii) {
        this.pos = end;
        return String.fromCharCode.apply(null, b as unknown as number[]);
      }
    }
    const s = utf8.decode(this.bytes.subarray(this.pos, end));
    this.pos = end;
    return s;
  }

  /** Steps over a value without decoding it (no string, BigInt or array made). */
  skip(type: RowType): void {
    switch (type) {
      case 'String': {
        // Read the length first: `this.pos += this.varUint()` would add it to the position before the length.
        const n = this.varUint();
        this.pos += n;
        break;
      }
      case 'Int64':
      case 'Float64':
        this.pos += 8;
        break;
      case 'Float32':
      case 'Int32':
        this.pos += 4;
        break;
      case 'UInt8':
      case 'Enum8':
        this.pos += 1;
        break;
      case 'Array(String)': {
        const n = this.varUint();
        for (let i = 0; i < n; i++) {
          const len = this.varUint();
          this.pos += len;
        }
        break;
      }
    }
    if (this.pos > this.bytes.length) throw new Error('row ends inside a value');
  }

  value(type: RowType): RowValue {
    const p = this.pos;
    switch (type) {
      case 'String':
        return this.string();
      case 'Int64':
        this.pos += 8;
        return this.view.getBigInt64(p, true);
      case 'Float64':
        this.pos += 8;
        return this.view.getFloat64(p, true);
      case 'Float32':
        this.pos += 4;
        return this.view.getFloat32(p, true);
      case 'UInt8':
        this.pos += 1;
        return this.view.getUint8(p) !== 0;
      case 'Int32':
        this.pos += 4;
        return this.view.getInt32(p, true);
      case 'Enum8':
        this.pos += 1;
        return this.view.getUint8(p);
      case 'Array(String)': {
        const n = this.varUint();
        const out: string[] = [];
        for (let i = 0; i < n; i++) out.push(this.string());
        return out;
      }
    }
  }
}

/** Reads one row written by any decoder back into values by column; throws on a short or long row. */
export function readRowValues(row: Uint8Array): RowValues {
  const r = new RowReader(row);
  const out: RowValues = {};
  for (const f of SAMPLE_FIELDS) out[f.column] = r.value(f.rowType);
  if (r.pos !== row.length) throw new Error(`row has ${row.length - r.pos} bytes after its last column`);
  return out;
}

/**
 * Reads the columns of a row up to and including `lastColumn` (in table order) and stops there: for
 * readers that need a few leading columns of a snapshot (the alerts' check of stored snapshots at
 * start-up, a snapshot's fleet id when an alert opens or clears) without decoding the rest. With
 * `only`, the other columns before `lastColumn` are stepped over, not decoded. (The hooks that run on
 * every written snapshot read its numbers with row-scalars.ts, which allocates nothing.)
 * @throws Error on a row that ends early
 */
export function readRowPrefix(row: Uint8Array, lastColumn: string, only?: ReadonlySet<string>): RowValues {
  const r = new RowReader(row);
  const out: RowValues = {};
  for (const f of SAMPLE_FIELDS) {
    if (only === undefined || only.has(f.column)) out[f.column] = r.value(f.rowType);
    else r.skip(f.rowType);
    if (f.column === lastColumn) break;
  }
  return out;
}

/** Column index of each column name in {@link SAMPLE_FIELDS} (the slots of {@link forEachRow}'s values). */
export const COLUMN_INDEX: Readonly<Record<string, number>> = Object.fromEntries(SAMPLE_FIELDS.map((f, i) => [f.column, i]));

const ROW_TYPES: readonly RowType[] = SAMPLE_FIELDS.map((f) => f.rowType);

/**
 * Calls `fn` with the values of each row of `rows` (rows written back to back, as a decode task's
 * output holds them), by column index ({@link COLUMN_INDEX}). The array is reused for every row: read
 * it inside `fn`, keep nothing. For consumers that need every row's values, e.g. the Foxglove messages
 * a decode worker derives from the rows (foxglove-output.ts); no object per row.
 * @throws Error on a row that ends early
 */
export function forEachRow(rows: Uint8Array, fn: (values: readonly RowValue[]) => void): void {
  const r = new RowReader(rows);
  const values: RowValue[] = new Array<RowValue>(ROW_TYPES.length).fill(0);
  while (r.pos < rows.length) {
    for (let i = 0; i < ROW_TYPES.length; i++) values[i] = r.value(ROW_TYPES[i]!);
    fn(values);
  }
}
