/**
 * TabSeparated rows, for a store that takes text only (chdb's raw insert; chdb-store.ts now goes
 * through a RowBinary spool file instead, which costs far less on both sides), columns in
 * {@link INSERT_COLUMNS} order. Escaping follows ClickHouse's TSV rules: `\\`, `\t`, `\n` (and `\r`,
 * `\0`) inside a field; array elements are single-quoted with `\'` escaped as well.
 */
import type { ByteWriter } from './byte-writer.js';
import { HEALTH_LEVEL_NAMES, type FlatSample } from './sample-fields.js';

const TAB = 0x09;
const NL = 0x0a;
const NEEDS_ESCAPE = /[\\\t\n\r\0]/;
const NEEDS_ESCAPE_QUOTED = /[\\\t\n\r\0']/;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0', "'": "\\'" };

/** A TSV field value for a string (escaped). */
export function escapeTsv(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(/[\\\t\n\r\0]/g, (c) => ESCAPES[c] ?? c) : s;
}

function escapeQuoted(s: string): string {
  return NEEDS_ESCAPE_QUOTED.test(s) ? s.replace(/[\\\t\n\r\0']/g, (c) => ESCAPES[c] ?? c) : s;
}

/** ClickHouse's text spelling of a float (JS spells the specials NaN/Infinity). */
function num(w: ByteWriter, v: number): void {
  if (Number.isFinite(v)) w.utf8(String(v));
  else w.utf8(Number.isNaN(v) ? 'nan' : v > 0 ? 'inf' : '-inf');
  w.u8(TAB);
}

function str(w: ByteWriter, s: string): void {
  w.utf8(escapeTsv(s));
  w.u8(TAB);
}

/** Appends one row. `robotField`/`fleetField` are the ids already passed through {@link escapeTsv}. */
export function writeTsvRow(w: ByteWriter, robotField: string, fleetField: string, f: FlatSample): void {
  w.utf8(robotField);
  w.u8(TAB);
  w.utf8(fleetField);
  w.u8(TAB);
  num(w, f.tsMs);
  num(w, f.receivedAtMs);
  num(w, f.latitude);
  num(w, f.longitude);
  num(w, f.elevationM);
  num(w, f.xM);
  num(w, f.yM);
  num(w, f.zM);
  num(w, f.headingDeg);
  num(w, f.linearMps);
  num(w, f.angularDps);
  num(w, f.batteryPct);
  num(w, f.voltageV);
  num(w, f.charging ? 1 : 0);
  str(w, f.mode);
  num(w, f.estop ? 1 : 0);
  num(w, f.gpsFix);
  str(w, f.missionRunId);
  str(w, f.missionState);
  num(w, f.progressPct);
  num(w, f.stepIndex);
  num(w, f.remainingDistanceM);
  num(w, f.etaS);
  str(w, HEALTH_LEVEL_NAMES[f.healthLevel] ?? 'unspecified');
  w.u8(0x5b); // [
  for (let i = 0; i < f.faults.length; i++) {
    if (i > 0) w.u8(0x2c); // ,
    w.u8(0x27); // '
    w.utf8(escapeQuoted(f.faults[i] ?? ''));
    w.u8(0x27);
  }
  w.u8(0x5d); // ]
  w.u8(TAB);
  if (Number.isFinite(f.cpuTempC)) w.utf8(String(f.cpuTempC));
  else w.utf8(Number.isNaN(f.cpuTempC) ? 'nan' : f.cpuTempC > 0 ? 'inf' : '-inf');
  w.u8(NL);
}
