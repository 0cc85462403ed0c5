/**
 * The allocation-free scalar reader (src/telemetry/sample/row-scalars.ts) against the reference row reader:
 * the same numbers for every numeric column of rows with random values (negative Int64s, NaN,
 * strings and arrays long enough for multi-byte lengths), false for every row cut short before its
 * last asked column, and the snapshot form the alerts and usage meter read.
 */
import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../../src/telemetry/sample/byte-writer.js';
import { readRowValues, writeRowFromValues } from '../../src/telemetry/sample/row-rowbinary.js';
import { RowScalarReader } from '../../src/telemetry/sample/row-scalars.js';
import type { RowValue, RowValues } from '../../src/telemetry/sample/row-values.js';
import { SAMPLE_FIELDS } from '../../src/telemetry/sample/sample-table.js';
import { newSnapshotScalars, readSnapshotScalars, SNAPSHOT_FORMAT, snapshotConditions, snapshotFleetId, snapshotValue } from '../../src/telemetry/sample/snapshot-codec.js';

/** Deterministic pseudo-random numbers (xorshift32), so a failure reproduces. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

function randomString(r: () => number): string {
  // Up to 300 characters (lengths past 127 take two LEB128 bytes), some of them not ASCII.
  const n = Math.floor(r() * (r() < 0.2 ? 300 : 20));
  let s = '';
  for (let i = 0; i < n; i++) s += r() < 0.1 ? 'é' : String.fromCharCode(97 + Math.floor(r() * 26));
  return s;
}

function randomValue(type: string, r: () => number): RowValue {
  switch (type) {
    case 'String':
      return randomString(r);
    case 'Int64':
      // Up to +-2^52, both signs: the high word negative too.
      return Math.round((r() - 0.5) * 2 ** 53);
    case 'Float64':
      return r() < 0.05 ? Number.NaN : (r() - 0.5) * 1e6;
    case 'Float32':
      return r() < 0.05 ? Number.NaN : Math.fround((r() - 0.5) * 1e4);
    case 'Int32':
      return Math.floor((r() - 0.5) * 2 ** 32);
    case 'UInt8':
      return r() < 0.5;
    case 'Enum8':
      return Math.floor(r() * 4);
    case 'Array(String)':
      return Array.from({ length: Math.floor(r() * (r() < 0.1 ? 150 : 4)) }, () => randomString(r));
    default:
      throw new Error(type);
  }
}

function randomRow(r: () => number): Uint8Array {
  const values: RowValues = {};
  for (const f of SAMPLE_FIELDS) values[f.column] = randomValue(f.rowType, r);
  const w = new ByteWriter(256);
  writeRowFromValues(w, values);
  return w.copyOut();
}

/** What the scalar reader must give for a reference value. */
function asNumber(v: RowValue): number {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return v as number;
}

/** Bytes the value of `type` at `p` takes. */
function sizeOf(type: string, bytes: Uint8Array, p: number): number {
  const varUint = (q: number): [number, number] => {
    let v = 0;
    let mul = 1;
    let n = 0;
    for (;;) {
      const b = bytes[q + n++]!;
      v += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return [v, n];
      mul *= 128;
    }
  };
  switch (type) {
    case 'String': {
      const [len, n] = varUint(p);
      return n + len;
    }
    case 'Array(String)': {
      const [count, n] = varUint(p);
      let q = p + n;
      for (let i = 0; i < count; i++) {
        const [len, m] = varUint(q);
        q += m + len;
      }
      return q - p;
    }
    case 'Int64':
    case 'Float64':
      return 8;
    case 'Float32':
    case 'Int32':
      return 4;
    default:
      return 1;
  }
}

const NUMERIC = SAMPLE_FIELDS.filter((f) => f.rowType !== 'String' && f.rowType !== 'Array(String)').map((f) => f.column);

describe('RowScalarReader', () => {
  it('reads every numeric column as the reference reader does, past strings and arrays of any length', () => {
    const r = rng(12);
    // Each numeric column alone, all of them, and all in reverse order (out slots follow the caller's order).
    const sets = [...NUMERIC.map((c) => [c]), NUMERIC, [...NUMERIC].reverse()];
    const readers = sets.map((cols) => new RowScalarReader(cols));
    for (let n = 0; n < 300; n++) {
      const row = randomRow(r);
      const full = readRowValues(row);
      // The row inside a larger buffer, at an offset, as snapshots are (a format byte in front).
      const padded = new Uint8Array(row.length + 3);
      padded.set(row, 3);
      sets.forEach((cols, k) => {
        const out = new Float64Array(cols.length);
        expect(readers[k]!.read(padded, 3, out)).toBe(true);
        cols.forEach((c, i) => expect(out[i], `${c} of row ${n}`).toEqual(asNumber(full[c]!)));
      });
    }
  });

  it('refuses every row cut short before the end of its last asked column, and reads no further', () => {
    const r = rng(7);
    const row = randomRow(r);
    const full = readRowValues(row);
    const last = NUMERIC.at(-1)!;
    const reader = new RowScalarReader([NUMERIC[0]!, last]);
    // Where the last asked column ends: the smallest cut that reads.
    let needed = -1;
    for (let len = 0; len <= row.length; len++) {
      const out = new Float64Array(2);
      if (reader.read(row.subarray(0, len), 0, out)) {
        needed = len;
        expect(out[1]).toEqual(asNumber(full[last]!));
        break;
      }
    }
    expect(needed).toBeGreaterThan(0);
    for (let len = needed; len <= row.length; len++) expect(reader.read(row.subarray(0, len), 0, new Float64Array(2))).toBe(true);
    // Columns after the last asked one are not looked at: garbage there changes nothing.
    const tail = row.slice(0, needed);
    const out = new Float64Array(2);
    expect(reader.read(Uint8Array.from([...tail, 0xff, 0xff]), 0, out)).toBe(true);
    expect(out[1]).toEqual(asNumber(full[last]!));
  });

  it('refuses a corrupt length (too many continuation bytes) of a string or an array, and ends', () => {
    const row = randomRow(rng(5));
    const full = readRowValues(row);
    // Where each column starts in this row.
    const startOf = (column: string): number => {
      let p = 0;
      for (const f of SAMPLE_FIELDS) {
        if (f.column === column) return p;
        p += sizeOf(f.rowType, row, p);
      }
      throw new Error(column);
    };
    for (const [column, asked] of [['mode', 'estop'], ['faults', 'cpu_temp_c']] as const) {
      const at = startOf(column);
      // 200 continuation bytes: the length overflows to Infinity, then (zero payload times Infinity) NaN.
      const corrupt = Uint8Array.from([...row.subarray(0, at), ...new Array<number>(150).fill(0xff), ...new Array<number>(50).fill(0x80), 0x01, ...row.subarray(at)]);
      expect(new RowScalarReader([asked]).read(corrupt, 0, new Float64Array(1)), column).toBe(false);
      expect(() => readRowValues(corrupt), column).toThrow(/more than 5 bytes/);
    }
    // A length in six bytes (a small value, overlong): both readers refuse it alike.
    const m = startOf('mode');
    let modeBytes = 1;
    while ((row[m + modeBytes - 1]! & 0x80) !== 0) modeBytes++;
    const len = new TextEncoder().encode(full.mode as string).length;
    expect(len).toBeLessThan(128);
    const overlong = Uint8Array.from([...row.subarray(0, m), len | 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, ...row.subarray(m + modeBytes)]);
    expect(new RowScalarReader(['estop']).read(overlong, 0, new Float64Array(1))).toBe(false);
    expect(() => readRowValues(overlong)).toThrow(/more than 5 bytes/);
    // A corrupt length of an array's element.
    const values: RowValues = { ...full, faults: ['abc'] };
    const w = new ByteWriter(256);
    writeRowFromValues(w, values);
    const one = w.copyOut();
    const f = startOf('faults');
    expect([one[f], one[f + 1]]).toEqual([1, 3]);
    const badElement = Uint8Array.from([...one.subarray(0, f + 1), ...new Array<number>(150).fill(0xff), ...new Array<number>(50).fill(0x80), 0x01, ...one.subarray(f + 2)]);
    expect(new RowScalarReader(['cpu_temp_c']).read(badElement, 0, new Float64Array(1))).toBe(false);
    // An array count far larger than the row: refused at once, not looped over.
    const at = startOf('faults');
    let countBytes = 1;
    while ((row[at + countBytes - 1]! & 0x80) !== 0) countBytes++;
    const huge = Uint8Array.from([...row.subarray(0, at), 0xff, 0xff, 0xff, 0xff, 0x0f, ...row.subarray(at + countBytes)]);
    expect(new RowScalarReader(['cpu_temp_c']).read(huge, 0, new Float64Array(1))).toBe(false);
  });

  it('names the column it cannot read', () => {
    expect(() => new RowScalarReader([])).toThrow(/no columns/);
    expect(() => new RowScalarReader(['lat', 'lat'])).toThrow(/named twice/);
    expect(() => new RowScalarReader(['fleet_id'])).toThrow(/fleet_id is String/);
    expect(() => new RowScalarReader(['faults'])).toThrow(/faults is Array\(String\)/);
    expect(() => new RowScalarReader(['nope'])).toThrow(/no column nope/);
  });
});

describe('readSnapshotScalars', () => {
  it('reads what snapshotConditions reads, and the clocks and position, from the same value', () => {
    const r = rng(99);
    const out = newSnapshotScalars();
    for (let n = 0; n < 50; n++) {
      const row = randomRow(r);
      const v = readRowValues(row);
      const value = snapshotValue(row);
      expect(readSnapshotScalars(value, out)).toBe(true);
      expect(out).toEqual({
        tsMs: Number(v.ts_ms), receivedAtMs: Number(v.received_at_ms), lat: v.lat, lon: v.lon,
        batteryPct: v.battery_pct, charging: v.charging, estop: v.estop,
      });
      const c = snapshotConditions(value)!;
      expect({ tsMs: out.tsMs, batteryPct: out.batteryPct, charging: out.charging, estop: out.estop }).toEqual({ tsMs: c.tsMs, batteryPct: c.batteryPct, charging: c.charging, estop: c.estop });
      expect(snapshotFleetId(value)).toBe(v.fleet_id);
    }
  });

  it('is false for another format and for a row cut short', () => {
    const row = randomRow(rng(3));
    const value = snapshotValue(row);
    const out = newSnapshotScalars();
    expect(readSnapshotScalars(Uint8Array.from([SNAPSHOT_FORMAT + 1, ...row]), out)).toBe(false);
    expect(readSnapshotScalars(value.subarray(0, 20), out)).toBe(false);
    expect(readSnapshotScalars(new Uint8Array(0), out)).toBe(false);
    expect(() => snapshotFleetId(Uint8Array.from([SNAPSHOT_FORMAT + 1, ...row]))).toThrow(`format ${SNAPSHOT_FORMAT + 1}`);
  });
});
