/**
 * How a robot's latest sample is kept in LMDB (`snapshots` db): one format byte, then that sample's
 * RowBinary row exactly as the decoders wrote it for the store (sample-table.ts order). So the
 * snapshot costs the decoders nothing (they only remember which row is newest), the put is a small
 * buffer (about half the cost of a msgpack object tree), and the field
 * table is the one definition of its layout. Readers turn it into a `TelemetrySnapshot` with
 * {@link decodeSnapshot}; a snapshot stored as an object by older gateways is returned as is.
 */
import { readRowPrefix, readRowValues } from './row-rowbinary.js';
import { RowScalarReader } from './row-scalars.js';
import type { RowValue, RowValues } from './row-values.js';
import { HEALTH_LEVEL_NAMES, SAMPLE_FIELDS } from './sample-table.js';
import type { TelemetrySnapshot } from './snapshot.js';

/** Bump when the field table changes the row layout: older values then read as absent. */
export const SNAPSHOT_FORMAT = 2;

/** The LMDB value for a row: the format byte and a copy of the row. */
export function snapshotValue(row: Uint8Array): Uint8Array {
  const out = new Uint8Array(row.length + 1);
  out[0] = SNAPSHOT_FORMAT;
  out.set(row, 1);
  return out;
}

function convert(type: string, v: RowValue): unknown {
  if (type === 'Int64') return Number(v);
  if (type === 'Enum8') return HEALTH_LEVEL_NAMES[v as number] ?? 'unspecified';
  if (type === 'Array(String)') return [...(v as readonly string[])];
  return v;
}

/**
 * The snapshot as GET /v1/robots serves it, from whatever `snapshots.get()` returned: undefined when
 * there is none (or it has an unknown format).
 */
export function decodeSnapshot(stored: unknown): TelemetrySnapshot | undefined {
  if (stored instanceof Uint8Array) {
    if (stored[0] !== SNAPSHOT_FORMAT) return undefined;
    const values = readRowValues(stored.subarray(1));
    const out: Record<string, unknown> = {};
    for (const f of SAMPLE_FIELDS) {
      const path = f.snapshot.split('.');
      let node = out;
      for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
      node[path.at(-1)!] = convert(f.rowType, values[f.column]!);
    }
    // proto: run_id is empty when the robot runs no mission.
    if ((out.mission as { runId: string }).runId === '') out.mission = null;
    return out as unknown as TelemetrySnapshot;
  }
  if (stored !== null && typeof stored === 'object') return withZeroes(stored as Record<string, unknown>) as unknown as TelemetrySnapshot;
  return undefined;
}

/** A column's value when the robot did not report it (what the store's DEFAULT gives the row). */
function zeroOf(type: string): unknown {
  switch (type) {
    case 'String': return '';
    case 'UInt8': return false;
    case 'Enum8': return HEALTH_LEVEL_NAMES[0];
    case 'Array(String)': return [];
    default: return 0;
  }
}

/**
 * An object snapshot (older gateways) with every column of today's table: columns added since it
 * was stored read as their zero value, as the store's rows do. Copied only when one is missing.
 */
function withZeroes(snap: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const f of SAMPLE_FIELDS) {
    const path = f.snapshot.split('.');
    let node: Record<string, unknown> | null = snap;
    for (const key of path.slice(0, -1)) {
      const next: unknown = node?.[key];
      node = next !== null && typeof next === 'object' ? (next as Record<string, unknown>) : null;
    }
    // A group that is null (no mission) stays null.
    if (node === null && path.length > 1 && snap[path[0]!] === null) continue;
    if (node !== null && node[path.at(-1)!] !== undefined) continue;
    out ??= structuredClone(snap);
    let target = out;
    for (const key of path.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
    target[path.at(-1)!] = zeroOf(f.rowType);
  }
  return out ?? snap;
}

/** The robot clock of a stored snapshot (any format), or undefined. */
export function snapshotTsOf(stored: unknown): number | undefined {
  const snap = decodeSnapshot(stored);
  return typeof snap?.tsMs === 'number' ? snap.tsMs : undefined;
}

/** What the alerts read from a robot's stored snapshot at start-up (docs/alerts.md): the e-stop and the battery. */
export interface SnapshotConditions {
  fleetId: string;
  /** Robot clock of the sample. */
  tsMs: number;
  batteryPct: number;
  charging: boolean;
  estop: boolean;
}

/** The last of `columns` in table order: a prefix read stops there. */
function lastColumnOf(columns: readonly string[]): string {
  const wanted = new Set(columns);
  let last = '';
  for (const f of SAMPLE_FIELDS) if (wanted.has(f.column)) last = f.column;
  return last;
}

const CONDITIONS_COLUMNS: ReadonlySet<string> = new Set(['fleet_id', 'ts_ms', 'battery_pct', 'charging', 'estop']);
const CONDITIONS_LAST_COLUMN = lastColumnOf([...CONDITIONS_COLUMNS]);

/** `columns` of a snapshot value (format byte + row), the others stepped over; undefined for another format or a short row. */
function prefixOf(value: Uint8Array, lastColumn: string, columns: ReadonlySet<string>): RowValues | undefined {
  if (value[0] !== SNAPSHOT_FORMAT) return undefined;
  try {
    return readRowPrefix(value.subarray(1), lastColumn, columns);
  } catch {
    return undefined;
  }
}

/**
 * What the snapshot hooks read from each snapshot written (the alerts' e-stop and battery, the usage
 * meter's clocks and position), filled in place by {@link readSnapshotScalars}.
 */
export interface SnapshotScalars {
  /** Robot clock of the sample. */
  tsMs: number;
  /** Gateway clock when the sample arrived. */
  receivedAtMs: number;
  lat: number;
  lon: number;
  batteryPct: number;
  charging: boolean;
  estop: boolean;
}

const SCALAR_COLUMNS = ['ts_ms', 'received_at_ms', 'lat', 'lon', 'battery_pct', 'charging', 'estop'] as const;
const scalarReader = new RowScalarReader(SCALAR_COLUMNS);
const scalarValues = new Float64Array(SCALAR_COLUMNS.length);

/** An object for {@link readSnapshotScalars} to fill (one per reader, reused for every snapshot). */
export function newSnapshotScalars(): SnapshotScalars {
  return { tsMs: 0, receivedAtMs: 0, lat: 0, lon: 0, batteryPct: 0, charging: false, estop: false };
}

/**
 * Reads the clocks, position, battery and e-stop of a snapshot as the snapshot writer puts it (format
 * byte + row) into `out`, allocating nothing (row-scalars.ts says why): the snapshot hooks run once
 * per robot per snapshot interval. Returns false, leaving `out` as it was, for another format or a row
 * that ends early or has a corrupt length.
 */
export function readSnapshotScalars(value: Uint8Array, out: SnapshotScalars): boolean {
  if (value[0] !== SNAPSHOT_FORMAT || !scalarReader.read(value, 1, scalarValues)) return false;
  const v = scalarValues;
  out.tsMs = v[0]!;
  out.receivedAtMs = v[1]!;
  out.lat = v[2]!;
  out.lon = v[3]!;
  out.batteryPct = v[4]!;
  out.charging = v[5] !== 0;
  out.estop = v[6] !== 0;
  return true;
}

const FLEET_ONLY: ReadonlySet<string> = new Set(['fleet_id']);

/**
 * The fleet id of a snapshot value (format byte + row), for the rare reader that needs it (an alert
 * raised or cleared), so the per-snapshot path decodes no string.
 * @throws Error for another format or a row that ends inside it
 */
export function snapshotFleetId(value: Uint8Array): string {
  if (value[0] !== SNAPSHOT_FORMAT) throw new Error(`snapshot format ${value[0]}, not ${SNAPSHOT_FORMAT}`);
  return readRowPrefix(value.subarray(1), 'fleet_id', FLEET_ONLY).fleet_id as string;
}

/**
 * The e-stop and battery of a stored snapshot (the value `snapshots.get()` returns, or the bytes the
 * snapshot writer puts), reading only the row's leading columns; undefined when there is none or it
 * cannot be read.
 */
export function snapshotConditions(stored: unknown): SnapshotConditions | undefined {
  if (stored instanceof Uint8Array) {
    const v = prefixOf(stored, CONDITIONS_LAST_COLUMN, CONDITIONS_COLUMNS);
    if (v === undefined) return undefined;
    return { fleetId: v.fleet_id as string, tsMs: Number(v.ts_ms), batteryPct: v.battery_pct as number, charging: v.charging === true, estop: v.estop === true };
  }
  const snap = decodeSnapshot(stored);
  if (snap === undefined) return undefined;
  return { fleetId: snap.fleetId, tsMs: snap.tsMs, batteryPct: snap.battery.percent, charging: snap.battery.charging, estop: snap.estop };
}
