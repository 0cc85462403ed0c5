/**
 * The field table (src/telemetry/sample/sample-table.ts) is the one description of a telemetry sample: the
 * proto fields it names exist with its types, and the live message, the LMDB snapshot, the REST robot
 * view and the agent's encoder carry exactly its fields with the row's values. Changing one column
 * at a time must change exactly that column's paths in each form, so a field added to the table but
 * missing in a form, or two fields swapped, fails here. (The DDL is checked in schema.test.ts, the
 * fast decoders in decoders.test.ts.)
 */
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { encodeSample, type SampleInput } from '../../src/agent/sample-encoder.js';
import { toRobotView } from '../../src/api/robot-view.js';
import { RobotView } from '../../src/api/schemas/robots.js';
import { RequestValidators } from '../../src/http/validation.js';
import type { RobotRecord } from '../../src/store/records.js';
import { ByteWriter } from '../../src/telemetry/sample/byte-writer.js';
import { liveJsonPrefix, writeLiveJson } from '../../src/telemetry/sample/live-json.js';
import { HealthLevel, TelemetrySampleSchema } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { decoderOf } from '../../src/telemetry/decode/select.js';
import { FramePacker } from '../../src/telemetry/decode/frame-packer.js';
import { readRowPrefix, readRowValues, writeRowFromValues } from '../../src/telemetry/sample/row-rowbinary.js';
import type { RowValue, RowValues } from '../../src/telemetry/sample/row-values.js';
import { HEALTH_LEVEL_NAMES, SAMPLE_FIELDS, type SampleField } from '../../src/telemetry/sample/sample-table.js';
import { decodeSnapshot, snapshotValue } from '../../src/telemetry/sample/snapshot-codec.js';
import type { DecodeResult } from '../../src/telemetry/decode/worker-protocol.js';
import { valueAt } from '../support/samples.js';
import { encodeSamples, sample } from './helpers.js';

const SCALAR_OF: Record<string, ScalarType> = {
  int64: ScalarType.INT64, int32: ScalarType.INT32, bool: ScalarType.BOOL, double: ScalarType.DOUBLE,
  float: ScalarType.FLOAT, string: ScalarType.STRING, 'repeated string': ScalarType.STRING,
};

function protoField(numbers: readonly number[]): DescField {
  let desc: DescMessage = TelemetrySampleSchema;
  let field: DescField | undefined;
  for (const no of numbers) {
    field = desc.fields.find((x) => x.number === no);
    if (!field) throw new Error(`no field ${numbers.join('.')}`);
    if (field.fieldKind === 'message') desc = field.message;
  }
  return field!;
}

/** Leaf paths of a JSON-like value ("a.b"), arrays counted as leaves. */
function leaves(v: unknown, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) for (const [p, y] of leaves(x, prefix ? `${prefix}.${k}` : k)) out.set(p, y);
  } else {
    out.set(prefix, v);
  }
  return out;
}

/** What a row value looks like in the live message and the snapshot. */
function shown(column: string, v: RowValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (column === 'health_level') return HEALTH_LEVEL_NAMES[v as number];
  return v;
}

function decodeOne(bytes: Uint8Array, live: boolean): DecodeResult {
  const packer = new FramePacker();
  packer.add('robot-1', 'fleet-1', bytes, 1_700_000_000_555);
  return decoderOf('reference').decode({ ...packer.take(), live: live ? Uint8Array.of(1) : null }, 0);
}

// One column at a time: every column at a base value (a mission running), then one column changed.
const BASE_UUIDS: Record<string, string> = { robot_id: '00000000-0000-4000-8000-00000000000a', fleet_id: '00000000-0000-4000-8000-00000000000b' };
const MARKED_UUIDS: Record<string, string> = { robot_id: '00000000-0000-4000-8000-0000000000aa', fleet_id: '00000000-0000-4000-8000-0000000000bb' };

/** A value per column, distinct from every other column's, base or marked. */
function valueOf(f: SampleField, i: number, marked: boolean): RowValue {
  switch (f.rowType) {
    case 'String':
      return (marked ? MARKED_UUIDS : BASE_UUIDS)[f.column] ?? `${marked ? 'm' : 'b'}-${f.column}`;
    case 'Int64':
      return 1_700_000_000_000n + BigInt(i * 1_000 + (marked ? 7 : 0));
    case 'Float64':
      return marked ? -(1_000.25 + i) : 10.5 + i;
    case 'Float32':
      return Math.fround(marked ? -(100.75 + i) : 0.5 + i);
    case 'Int32':
      return marked ? -(50 + i) : 3 + i;
    case 'UInt8':
      return marked;
    case 'Enum8':
      return marked ? 3 : 1;
    case 'Array(String)':
      return marked ? ['m-1', 'm-2'] : ['b-1'];
  }
}

function baseValues(): RowValues {
  return Object.fromEntries(SAMPLE_FIELDS.map((f, i) => [f.column, valueOf(f, i, false)]));
}

function withMarked(column: string): RowValues {
  const i = SAMPLE_FIELDS.findIndex((f) => f.column === column);
  return { ...baseValues(), [column]: valueOf(SAMPLE_FIELDS[i]!, i, true) };
}

function liveOf(v: RowValues): Map<string, unknown> {
  const w = new ByteWriter(1024);
  writeLiveJson(w, liveJsonPrefix(v.robot_id as string, v.fleet_id as string), v);
  const msg = JSON.parse(Buffer.from(w.copyOut()).toString()) as Record<string, unknown>;
  expect(msg.op).toBe('sample');
  delete msg.op;
  return leaves(msg);
}

function snapshotOf(v: RowValues): ReturnType<typeof decodeSnapshot> {
  const w = new ByteWriter(1024);
  writeRowFromValues(w, v);
  return decodeSnapshot(snapshotValue(w.copyOut()));
}

/** The robot record the snapshot belongs to (both are keyed by the robot id in LMDB). */
function robotOf(v: RowValues): RobotRecord {
  return {
    robotId: v.robot_id as string, fleetId: v.fleet_id as string, orgId: 'org', name: 'r', capabilities: ['stop'],
    active: true, tokenHash: new Uint8Array(32), createdAtMs: 1,
  };
}

const validView = new RequestValidators().body(RobotView);

function viewOf(v: RowValues): Map<string, unknown> {
  const view = toRobotView(robotOf(v), snapshotOf(v), true, null);
  expect(validView(view), JSON.stringify(validView.errors)).toBe(true);
  return leaves(view);
}

/**
 * RobotView fields that do not come from a sample (the robot record, the link registry; `labels` and
 * `notes` are the record's metadata, set by PATCH /v1/robots/{id}).
 */
const VIEW_NOT_FROM_SAMPLE = ['name', 'active', 'online', 'linkConflict', 'capabilities', 'labels', 'notes', 'vda5050'];
/** View paths the robot record fills (equal to the snapshot's ids), present before any report. */
const VIEW_FROM_RECORD = ['id', 'fleetId'];

/** Paths whose value differs between two leaf maps with the same paths. */
function changed(a: Map<string, unknown>, b: Map<string, unknown>): string[] {
  expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
  return [...a.keys()].filter((k) => !isDeepStrictEqual(a.get(k), b.get(k))).sort();
}

describe('the telemetry field table', () => {
  it('gives every field a path in every form, no path to two fields', () => {
    for (const f of SAMPLE_FIELDS) {
      expect(f.view.length, f.column).toBeGreaterThan(0);
      expect(f.agent === null, f.column).toBe(f.proto === null);
    }
    for (const paths of [SAMPLE_FIELDS.map((f) => f.column), SAMPLE_FIELDS.map((f) => f.live), SAMPLE_FIELDS.map((f) => f.snapshot), SAMPLE_FIELDS.flatMap((f) => f.view)]) {
      expect(paths.filter((p, i) => paths.indexOf(p) !== i)).toEqual([]);
    }
  });

  it.each(SAMPLE_FIELDS.map((f) => [f.column, f] as const))('changing %s changes exactly its live path, snapshot path and view paths', (_, f) => {
    const base = baseValues();
    const marked = withMarked(f.column);
    const want = shown(f.column, marked[f.column]!);

    const live = liveOf(marked);
    expect(changed(liveOf(base), live), 'live').toEqual([f.live]);
    expect(live.get(f.live), 'live').toEqual(want);

    const snap = leaves(snapshotOf(marked));
    expect(changed(leaves(snapshotOf(base)), snap), 'snapshot').toEqual([f.snapshot]);
    expect(snap.get(f.snapshot), 'snapshot').toEqual(want);

    const view = viewOf(marked);
    expect(changed(viewOf(base), view), 'view').toEqual([...f.view].sort());
    for (const p of f.view) expect(view.get(p), `view ${p}`).toEqual(want);
  });

  it('the live message, the snapshot and the view have no path the table does not name', () => {
    const base = baseValues();
    expect([...liveOf(base).keys()].sort()).toEqual(SAMPLE_FIELDS.map((f) => f.live).sort());
    expect([...leaves(snapshotOf(base)).keys()].sort()).toEqual(SAMPLE_FIELDS.map((f) => f.snapshot).sort());
    const view = [...viewOf(base).keys()].filter((k) => !VIEW_NOT_FROM_SAMPLE.includes(k.split('.')[0]!));
    expect(view.sort()).toEqual(SAMPLE_FIELDS.flatMap((f) => f.view).sort());
  });

  it('no mission (empty run id): every mission field is null in the live message, the snapshot and the view', () => {
    const v = { ...baseValues(), mission_run_id: '' };
    const mission = SAMPLE_FIELDS.filter((f) => f.snapshot.startsWith('mission.'));
    expect(mission.map((f) => f.column)).toContain('mission_run_id');
    const live = liveOf(v);
    expect(live.get('mission')).toBeNull();
    expect(snapshotOf(v)!.mission).toBeNull();
    const view = toRobotView(robotOf(v), snapshotOf(v), true, null);
    expect(validView(view)).toBe(true);
    for (const f of mission) for (const p of f.view) expect(valueAt(view, p), p).toBeNull();
    for (const f of SAMPLE_FIELDS.filter((x) => !mission.includes(x))) for (const p of f.view) expect(valueAt(view, p), p).not.toBeNull();
  });

  it('before the first report the view shows every sample field as null (ids come from the robot record)', () => {
    const v = baseValues();
    const view = toRobotView(robotOf(v), undefined, false, null);
    expect(validView(view)).toBe(true);
    for (const f of SAMPLE_FIELDS) {
      for (const p of f.view) {
        if (VIEW_FROM_RECORD.includes(p)) expect(valueAt(view, p), p).toBe(v[f.column]);
        else expect(valueAt(view, p), p).toBeNull();
      }
    }
  });

  it('docs/telemetry-stream.md lists every field with its live path and view paths', () => {
    const doc = readFileSync(new URL('../../docs/telemetry-stream.md', import.meta.url), 'utf8');
    // The table under "One sample, every form": from its header to the first line that is not a row.
    const lines = doc.slice(doc.indexOf('| ClickHouse column |')).split('\n');
    const rows = lines.slice(2, lines.findIndex((l) => !l.startsWith('|')))
      .map((l) => l.split('|').slice(1, -1).map((c) => [...c.matchAll(/`([^`]+)`/g)].map((m) => m[1])));
    expect(rows).toEqual(SAMPLE_FIELDS.map((f) => [[f.column], [f.live], [...f.view]]));
  });

  it('names proto fields that exist, with its scalar types', () => {
    for (const f of SAMPLE_FIELDS) {
      if (f.proto === null) continue;
      const field = protoField(f.proto);
      if (f.protoType === 'enum') expect(field.fieldKind, f.column).toBe('enum');
      else if (f.protoType === 'repeated string') expect([field.fieldKind, field.scalar], f.column).toEqual(['list', ScalarType.STRING]);
      else expect([field.fieldKind, field.scalar], f.column).toEqual(['scalar', SCALAR_OF[f.protoType!]]);
    }
  });

  it('every TelemetrySample field has a column', () => {
    const leafNumbers: string[] = [];
    for (const field of TelemetrySampleSchema.fields) {
      if (field.fieldKind === 'message') for (const sub of field.message.fields) leafNumbers.push(`${field.number}.${sub.number}`);
      else leafNumbers.push(String(field.number));
    }
    expect(SAMPLE_FIELDS.filter((f) => f.proto).map((f) => f.proto!.join('.')).sort()).toEqual(leafNumbers.sort());
  });

  it('the live message has exactly the table\'s live paths, with the row\'s values', () => {
    const out = decodeOne(encodeSamples([sample(1_700_000_000_000, 3, { faults: ['a', 'b'] })]), true);
    const row = readRowValues(out.rows);
    const msg = JSON.parse(Buffer.from(out.live!.data).toString()) as Record<string, unknown>;
    const got = leaves(msg);
    got.delete('op');
    expect([...got.keys()].sort()).toEqual(SAMPLE_FIELDS.map((f) => f.live).sort());
    for (const f of SAMPLE_FIELDS) {
      const v = row[f.column]!;
      const want = shown(f.column, v);
      // Float32 columns: the message spells the float's exact value, as the row holds it.
      expect(got.get(f.live), f.column).toEqual(want);
    }
  });

  it('a prefix read of some columns steps over the others and reads the same values as a full read', () => {
    const out = decodeOne(encodeSamples([sample(1_700_000_000_000, 5, { faults: ['motor_overtemp', 'lidar'], mode: 'autonomous', runId: 'run-9' })]), false);
    const full = readRowValues(out.rows);
    SAMPLE_FIELDS.forEach((last, i) => {
      // Every other column up to `last`, and `last` itself: strings, arrays and numbers are stepped over.
      const only = new Set(SAMPLE_FIELDS.slice(0, i + 1).filter((_, j) => j % 2 === i % 2).map((f) => f.column));
      const got = readRowPrefix(out.rows, last.column, only);
      expect(Object.keys(got).sort(), last.column).toEqual([...only].sort());
      for (const c of only) expect(got[c], c).toEqual(full[c]);
    });
    // A row cut short inside a stepped-over column is refused, not read past its end.
    const short = out.rows.subarray(0, out.rows.length - 1);
    expect(() => readRowPrefix(short, SAMPLE_FIELDS.at(-1)!.column, new Set([SAMPLE_FIELDS[0]!.column]))).toThrow();
  });

  it('the snapshot has exactly the table\'s snapshot paths, with the row\'s values', () => {
    const out = decodeOne(encodeSamples([sample(1_700_000_000_000, 4)]), false);
    const snap = decodeSnapshot(snapshotValue(out.rows.subarray(out.snapshots[1], out.snapshots[2])))!;
    const row = readRowValues(out.rows);
    const got = leaves(snap);
    expect([...got.keys()].sort()).toEqual(SAMPLE_FIELDS.map((f) => f.snapshot).sort());
    for (const f of SAMPLE_FIELDS) expect(got.get(f.snapshot), f.column).toEqual(shown(f.column, row[f.column]!));
  });

  it('the agent\'s encoder puts each SampleInput field into the table\'s column', () => {
    const base: SampleInput = {
      tsMs: 1_700_000_000_000, latitude: 0, longitude: 0, elevationM: 0, xM: 0, yM: 0, zM: 0, headingDeg: 0,
      linearMps: 0, angularDps: 0, batteryPercent: 0, voltageV: 0, charging: false, mode: '', estop: false,
      mission: { runId: 'run', missionState: '', progressPct: 0, stepIndex: 0, remainingDistanceM: 0, etaS: 0 },
      healthLevel: HealthLevel.UNSPECIFIED, faults: [], cpuTempC: 0, gpsFix: 0, mapId: '', loads: { count: 0, ids: [], types: [], weightKg: 0 },
    };
    const agentFields = SAMPLE_FIELDS.filter((f) => f.agent !== null);
    expect(agentFields.map((f) => f.agent!.split('.')[0]).filter((k, i, a) => a.indexOf(k) === i).sort())
      .toEqual(Object.keys(base).sort());
    agentFields.forEach((f, i) => {
      const distinct: Record<string, unknown> = {
        int64: 1_234_567_890_123 + i, int32: 7 + i, enum: HealthLevel.ERROR, bool: true, double: 12.5 + i,
        float: Math.fround(0.25 + i), string: `s${i}`, 'repeated string': ['a', `b${i}`],
      };
      const input = structuredClone(base) as unknown as Record<string, Record<string, unknown>>;
      const path = f.agent!.split('.');
      if (path.length === 2) input[path[0]!]![path[1]!] = distinct[f.protoType!];
      else (input as Record<string, unknown>)[path[0]!] = distinct[f.protoType!];
      const enc = encodeSample(input as unknown as SampleInput);
      const frame = Uint8Array.from([0x0a, (enc.length & 0x7f) | (enc.length > 127 ? 0x80 : 0), ...(enc.length > 127 ? [enc.length >> 7] : []), ...enc]);
      const row = readRowValues(decodeOne(frame, false).rows);
      const want = f.protoType === 'int64' ? BigInt(distinct.int64 as number) : distinct[f.protoType!];
      expect(row[f.column], `${f.agent} -> ${f.column}`).toEqual(want);
    });
  });
});

describe('an object snapshot of an older gateway', () => {
  it('reads the columns added since as their zero values, and is not changed', () => {
    const stored = {
      robotId: 'r', fleetId: 'f', tsMs: 1, receivedAtMs: 2, latitude: 1, longitude: 2, elevationM: 3,
      pose: { xM: 0, yM: 0, zM: 0, headingDeg: 0 }, velocity: { linearMps: 0, angularDps: 0 }, gpsFix: 1, mode: 'manual',
      estop: true, battery: { percent: 50, voltageV: 24, charging: true }, mission: null,
      health: { level: 'ok', faults: [], cpuTempC: 40 },
    };
    const before = structuredClone(stored);
    const snap = decodeSnapshot(stored)!;
    expect(snap.mapId).toBe('');
    expect(snap.loads).toEqual({ count: 0, ids: [], types: [], weightKg: 0 });
    expect(snap.mission).toBeNull();
    expect(snap.health).toEqual(stored.health);
    expect(stored).toEqual(before);
    const complete = decodeSnapshot(snap);
    expect(complete).toBe(snap);
  });
});
