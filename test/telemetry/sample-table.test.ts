/**
 * The field table (src/telemetry/sample-table.ts) is the one description of a telemetry sample: the
 * proto fields it names exist with its types, and the live message, the LMDB snapshot and the
 * agent's encoder carry exactly its fields with the row's values. (The DDL is checked in
 * schema.test.ts, the fast decoders in decoders.test.ts.)
 */
import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { encodeSample, type SampleInput } from '../../src/agent/sample-encoder.js';
import { HealthLevel, TelemetrySampleSchema } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { decoderOf } from '../../src/telemetry/decode/select.js';
import { FramePacker } from '../../src/telemetry/frame-packer.js';
import { readRowValues } from '../../src/telemetry/row-rowbinary.js';
import type { RowValue } from '../../src/telemetry/row-values.js';
import { HEALTH_LEVEL_NAMES, SAMPLE_FIELDS } from '../../src/telemetry/sample-table.js';
import { decodeSnapshot, snapshotValue } from '../../src/telemetry/snapshot-codec.js';
import type { DecodeResult } from '../../src/telemetry/worker-protocol.js';
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

describe('the telemetry field table', () => {
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
      healthLevel: HealthLevel.UNSPECIFIED, faults: [], cpuTempC: 0, gpsFix: 0,
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
