/**
 * RowBinary rows for the ClickHouse server (`INSERT ... FORMAT RowBinary`), columns in
 * {@link INSERT_COLUMNS} order. RowBinary is the cheapest format for the server to parse (no text
 * parsing of floats), and it is identical on 18.16 and 24.x because `ts` is a server-side DEFAULT.
 */
import type { ByteWriter } from './byte-writer.js';
import type { FlatSample } from './sample-fields.js';

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

/** Appends one row. `robotId`/`fleetId` come from {@link encodeRowBinaryString}. */
export function writeRowBinary(w: ByteWriter, robotId: Uint8Array, fleetId: Uint8Array, f: FlatSample): void {
  w.raw(robotId);
  w.raw(fleetId);
  w.i64(f.tsMs);
  w.i64(f.receivedAtMs);
  w.f64(f.latitude);
  w.f64(f.longitude);
  w.f64(f.elevationM);
  w.f64(f.xM);
  w.f64(f.yM);
  w.f64(f.zM);
  w.f64(f.headingDeg);
  w.f64(f.linearMps);
  w.f64(f.angularDps);
  w.f32(f.batteryPct);
  w.f32(f.voltageV);
  w.u8(f.charging ? 1 : 0);
  w.rbString(f.mode);
  w.u8(f.estop ? 1 : 0);
  w.i32(f.gpsFix);
  w.rbString(f.missionRunId);
  w.rbString(f.missionState);
  w.f32(f.progressPct);
  w.i32(f.stepIndex);
  w.f64(f.remainingDistanceM);
  w.f64(f.etaS);
  w.u8(f.healthLevel); // Enum8 travels as its Int8 value
  w.varUint(f.faults.length);
  for (const fault of f.faults) w.rbString(fault);
  w.f32(f.cpuTempC);
}
