/** RowBinary telemetry rows for the cluster tests (row-split, cluster store): any robot, any ts. */
import { ByteWriter } from '../../src/telemetry/sample/byte-writer.js';
import { writeRowFromValues } from '../../src/telemetry/sample/row-rowbinary.js';
import type { RowValues } from '../../src/telemetry/sample/row-values.js';
import { SAMPLE_FIELDS } from '../../src/telemetry/sample/sample-table.js';

/** One row's values: robot and ts as given, every other column a plain value of its type (faults: a varying array). */
export function rowValues(robotId: string, tsMs: number): RowValues {
  const v: RowValues = {};
  for (const f of SAMPLE_FIELDS) {
    switch (f.rowType) {
      case 'String': v[f.column] = f.column === 'robot_id' ? robotId : `${f.column}-${tsMs % 3}`; break;
      case 'Int64': v[f.column] = tsMs; break;
      case 'Float64': case 'Float32': v[f.column] = 1.5; break;
      case 'UInt8': v[f.column] = tsMs % 2 === 1; break;
      case 'Int32': v[f.column] = 7; break;
      case 'Enum8': v[f.column] = 1; break;
      case 'Array(String)': v[f.column] = Array.from({ length: tsMs % 3 }, (_, i) => `fault-${i}`); break;
    }
  }
  return v;
}

/** Rows for `robots` x `perRobot` samples, each robot's rows in a run (as a batch is), one chunk. */
export function rowsFor(robots: readonly string[], perRobot: number, t0 = 1_700_000_000_000): Uint8Array {
  const w = new ByteWriter(64 * 1024);
  for (const r of robots) for (let i = 0; i < perRobot; i++) writeRowFromValues(w, rowValues(r, t0 + i * 100));
  return w.copyOut();
}

/** The same rows as {@link rowsFor}, one array per row, with their robot. */
export function rowList(robots: readonly string[], perRobot: number, t0 = 1_700_000_000_000): { robotId: string; row: Uint8Array }[] {
  const out: { robotId: string; row: Uint8Array }[] = [];
  for (const r of robots) {
    for (let i = 0; i < perRobot; i++) {
      const w = new ByteWriter(1024);
      writeRowFromValues(w, rowValues(r, t0 + i * 100));
      out.push({ robotId: r, row: w.copyOut() });
    }
  }
  return out;
}
