/**
 * Row boundaries inside a RowBinary rows buffer, without decoding values: the live stream's binary
 * encoding sends each sample's row on its own (docs/telemetry-stream.md), and its decimation reads the
 * robot clock (`ts_ms`). Widths come from the field table, so a new column needs nothing here.
 */
import { SAMPLE_FIELDS, type RowType } from './sample-table.js';

// Fixed width in bytes; -1 a String (LEB128 length + bytes), -2 an Array(String).
const WIDTH: Record<RowType, number> = {
  String: -1, 'Array(String)': -2, Int64: 8, Float64: 8, Float32: 4, UInt8: 1, Int32: 4, Enum8: 1,
};
const LAYOUT = Int8Array.from(SAMPLE_FIELDS.map((f) => WIDTH[f.rowType]));
const TS_COLUMN = SAMPLE_FIELDS.findIndex((f) => f.column === 'ts_ms');

/** Spans of the rows of a buffer: `spans` holds (start, end) pairs, `ts` each row's `ts_ms`. */
export interface RowSpans {
  spans: Uint32Array;
  ts: Float64Array;
}

/**
 * Splits `rowCount` consecutive rows of `rows` (as a decoder wrote them).
 * @throws Error when the rows end early (a decoder bug: they were just written)
 */
export function rowSpans(rows: Uint8Array, rowCount: number): RowSpans {
  const spans = new Uint32Array(rowCount * 2);
  const ts = new Float64Array(rowCount);
  const view = new DataView(rows.buffer, rows.byteOffset, rows.byteLength);
  let p = 0;
  const varUint = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const b = rows[p++];
      if (b === undefined) throw new Error('row ends inside a length');
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
      shift += 7;
    }
  };
  for (let r = 0; r < rowCount; r++) {
    spans[r * 2] = p;
    for (let c = 0; c < LAYOUT.length; c++) {
      const w = LAYOUT[c]!;
      if (c === TS_COLUMN) ts[r] = Number(view.getBigInt64(p, true));
      // The length is read into a local first: `p += varUint()` would add to p's value before the read.
      if (w > 0) p += w;
      else if (w === -1) {
        const len = varUint();
        p += len;
      } else {
        for (let n = varUint(); n > 0; n--) {
          const len = varUint();
          p += len;
        }
      }
    }
    if (p > rows.length) throw new Error('rows end inside a row');
    spans[r * 2 + 1] = p;
  }
  return { spans, ts };
}
