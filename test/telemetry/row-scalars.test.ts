/**
 * The allocation-free scalar reader (src/telemetry/row-scalars.ts) against the reference row reader:
 * the same numbers for every numeric column of rows with random values (negative Int64s, NaN,
 * strings and arrays long enough for multi-byte lengths), false for every row cut short before its
 * last asked column, and the snapshot form the alerts and usage meter read.
 */
import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../../src/telemetry/byte-writer.js';
import { readRowValues, writeRowFromValues } from '../../src/telemetry/row-rowbinary.js';
import { RowScalarReader } from '../../src/telemetry/row-scalars.js';
import type { RowValue, RowValues } from '../../src/telemetry/row-values.js';
import { SAMPLE_FIELDS } from '../../src/telemetry/sample-table.js';
import { newSnapshotScalars, readSnapshotScalars, snapshotConditions, snapshotFleetId, snapshotValue } from '../../src/telemetry/snapshot-codec.js';

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

  it('names the column it cannot read', () => {
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
    expect(readSnapshotScalars(Uint8Array.from([2, ...row]), out)).toBe(false);
    expect(readSnapshotScalars(value.subarray(0, 20), out)).toBe(false);
    expect(readSnapshotScalars(new Uint8Array(0), out)).toBe(false);
    expect(() => snapshotFleetId(Uint8Array.from([2, ...row]))).toThrow(/format 2/);
  });
});
