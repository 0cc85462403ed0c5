/**
 * The reference decoder: protobuf-es `fromBinary` for parsing, the field table (sample-table.ts) for
 * everything written. Slow (a message object tree per sample), so production runs the hand-rolled
 * reader or the C++ addon; test/telemetry/decoders.test.ts requires both to produce exactly what this
 * produces. Kept in src/ (not test/) so the rules it encodes live next to the table they follow.
 */
import { fromBinary, type DescMessage } from '@bufbuild/protobuf';
import { TelemetryBatchSchema, TelemetrySampleSchema, type TelemetrySample } from '../../gen/fleetgw/v1/telemetry_pb.js';
import { writeRowFromValues, type RowValue, type RowValues, BOUND_REASONS, SAMPLE_FIELDS, utf8CutEnd, type ProtoType, type SampleField, type StringBound, writeLiveJson } from '../sample/index.js';
import type { TaskOutput } from './task-output.js';

const ZERO: Record<ProtoType, RowValue> = {
  int64: 0n, int32: 0, enum: 0, bool: false, double: 0, float: 0, string: '', 'repeated string': [],
};

/** proto field numbers -> protobuf-es property names, resolved once from the generated schema. */
function localPath(schema: DescMessage, numbers: readonly number[]): string[] {
  const names: string[] = [];
  let desc: DescMessage | undefined = schema;
  for (const no of numbers) {
    const field: DescMessage['fields'][number] | undefined = desc?.fields.find((x) => x.number === no);
    if (!field) throw new Error(`sample-table: no field ${numbers.join('.')} in ${schema.typeName}`);
    names.push(field.localName);
    desc = field.fieldKind === 'message' ? field.message : undefined;
  }
  return names;
}

const PROTO_FIELDS = SAMPLE_FIELDS.filter((f): f is SampleField & { proto: readonly number[]; protoType: ProtoType } => f.proto !== null && f.protoType !== null)
  .map((f) => ({ column: f.column, path: localPath(TelemetrySampleSchema, f.proto), zero: ZERO[f.protoType], bound: f.bound }));

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** `s` cut to its bound, counting under `reason` when it was cut. */
function boundString(s: string, maxBytes: number, counts: Uint32Array, reason: number): string {
  const b = utf8.encode(s);
  const e = utf8CutEnd(b, 0, b.length, maxBytes);
  if (e === b.length) return s;
  counts[reason]!++;
  return text.decode(b.subarray(0, e));
}

/** A value as sample-table.ts bounds it (the rules every decoder applies). */
function bounded(column: string, value: RowValue, bound: StringBound, counts: Uint32Array): RowValue {
  if (Array.isArray(value)) {
    let list = value as string[];
    if (bound.maxItems !== undefined && list.length > bound.maxItems) {
      counts[BOUND_REASONS.indexOf(`${column}_too_many`)]! += list.length - bound.maxItems;
      list = list.slice(0, bound.maxItems);
    }
    const reason = BOUND_REASONS.indexOf(`${column}_too_long`);
    return list.map((x) => boundString(x, bound.maxBytes, counts, reason));
  }
  return boundString(value as string, bound.maxBytes, counts, BOUND_REASONS.indexOf(`${column}_too_long`));
}

function valuesOf(sample: TelemetrySample, robotId: string, fleetId: string, receivedAtMs: number, counts: Uint32Array): RowValues {
  const v: RowValues = { robot_id: robotId, fleet_id: fleetId, received_at_ms: receivedAtMs };
  for (const f of PROTO_FIELDS) {
    let x: unknown = sample;
    for (const name of f.path) x = x === undefined ? undefined : (x as Record<string, unknown>)[name];
    const value = (x ?? f.zero) as RowValue;
    v[f.column] = f.bound === null ? value : bounded(f.column, value, f.bound, counts);
  }
  return v;
}

/** Decodes one frame with protobuf-es; throws when it is not a valid TelemetryBatch. */
export function decodeFrameReference(out: TaskOutput, u8: Uint8Array, _view: DataView, start: number, end: number, robotIndex: number, receivedAtMs: number): void {
  const batch = fromBinary(TelemetryBatchSchema, u8.subarray(start, end));
  const robotId = out.task.robotIds[robotIndex] ?? '';
  const fleetId = out.task.fleetIds[robotIndex] ?? '';
  const prefix = out.livePrefix[robotIndex] ? new TextDecoder().decode(out.livePrefix[robotIndex]) : null;
  for (const sample of batch.samples) {
    const v = valuesOf(sample, robotId, fleetId, receivedAtMs, out.frameBounds);
    const rowStart = out.rows.pos;
    writeRowFromValues(out.rows, v);
    const ts = BigInt.asIntN(64, v.ts_ms as bigint);
    out.rowDone(robotIndex, rowStart, Number(ts >> 32n), Number(ts & 0xffffffffn));
    if (prefix !== null) {
      const liveStart = out.live!.pos;
      writeLiveJson(out.live!, prefix, v);
      out.liveDone(robotIndex, liveStart);
    }
  }
}
