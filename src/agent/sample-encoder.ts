/**
 * A hand-written encoder for TelemetrySample, for agents that sample at high rates.
 *
 * protobuf-es creates a message object per sample before encoding it; this writes the same bytes (identical to
 * `toBinary(TelemetrySampleSchema, ...)` for the same values, see test/agent/sample-encoder.test.ts)
 * from a flat object in a fraction of that, which is what lets one process simulate 100+ robots at
 * high rates. `SampleInput` and the writes of each field are generated from the telemetry field
 * table (the region at the end, `npm run gen`), so field numbers and types follow the proto.
 */
import type { HealthLevel } from '../gen/fleetgw/v1/telemetry_pb.js';
import { writeVarint } from '../protocol/varint.js';

let scratch = Buffer.allocUnsafe(4096);
let pos = 0;

/** Encodes a sample as TelemetrySample bytes. */
export function encodeSample(s: SampleInput): Uint8Array {
  const bound = sizeBound(s);
  if (bound > scratch.length) scratch = Buffer.allocUnsafe(bound * 2);
  pos = 0;
  writeFields(s);
  const out = Buffer.allocUnsafe(pos);
  scratch.copy(out, 0, 0, pos);
  return out;
}

function putTag(tag: number): void {
  if (tag < 0x80) scratch[pos++] = tag;
  else pos = writeVarint(scratch, pos, tag);
}

// Nested messages: write the tag, reserve one length byte, and widen it afterwards if needed.
function openMessage(tag: number): number {
  putTag(tag);
  return pos++;
}

function closeMessage(lenAt: number): void {
  const len = pos - lenAt - 1;
  if (len < 128) {
    scratch[lenAt] = len;
    return;
  }
  const extra = varintBytes(len) - 1;
  scratch.copyWithin(lenAt + 1 + extra, lenAt + 1, pos);
  writeVarint(scratch, lenAt, len);
  pos += extra;
}

function varintBytes(v: number): number {
  let n = 1;
  while (v >= 128) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

// proto3 implicit presence: zero values are not written (as protobuf-es does; NaN is written).
function double(tag: number, v: number): void {
  if (v === 0) return;
  putTag(tag);
  scratch.writeDoubleLE(v, pos);
  pos += 8;
}

function float(tag: number, v: number): void {
  if (v === 0) return;
  putTag(tag);
  scratch.writeFloatLE(v, pos);
  pos += 4;
}

function bool(tag: number, v: boolean): void {
  if (!v) return;
  putTag(tag);
  scratch[pos++] = 1;
}

/** A non-negative integer (epoch milliseconds) as an int64 varint. */
function int64(tag: number, v: number): void {
  if (v === 0) return;
  putTag(tag);
  pos = writeVarint(scratch, pos, v);
}

function int32(tag: number, v: number): void {
  if (v === 0) return;
  putTag(tag);
  if (v > 0) {
    pos = writeVarint(scratch, pos, v);
    return;
  }
  // Negative int32 values are sign-extended to 64 bits: always 10 bytes.
  let x = BigInt.asUintN(64, BigInt(v | 0));
  for (let i = 0; i < 9; i++) {
    scratch[pos++] = Number(x & 0x7fn) | 0x80;
    x >>= 7n;
  }
  scratch[pos++] = Number(x);
}

function string(tag: number, v: string): void {
  if (v.length === 0) return;
  putTag(tag);
  writeString(v);
}

function writeString(v: string): void {
  const len = Buffer.byteLength(v, 'utf8');
  pos = writeVarint(scratch, pos, len);
  scratch.write(v, pos, len, 'utf8');
  pos += len;
}

// --- generated from the field table by `npm run gen` (scripts/codegen/sample-encoder.mjs): do not edit below ---
/** One telemetry sample as plain values (the fields of proto/fleetgw/v1/telemetry.proto's TelemetrySample). */
export interface SampleInput {
  tsMs: number;
  latitude: number;
  longitude: number;
  elevationM: number;
  xM: number;
  yM: number;
  zM: number;
  headingDeg: number;
  linearMps: number;
  angularDps: number;
  batteryPercent: number;
  voltageV: number;
  charging: boolean;
  mode: string;
  estop: boolean;
  gpsFix: number;
  /** null: absent from the sample (the mission message is left out). */
  mission: {
    runId: string;
    missionState: string;
    progressPct: number;
    stepIndex: number;
    remainingDistanceM: number;
    etaS: number;
  } | null;
  healthLevel: HealthLevel;
  faults: readonly string[];
  cpuTempC: number;
  mapId: string;
  /** null: absent from the sample (the loads message is left out). */
  loads: {
    count: number;
    ids: readonly string[];
    types: readonly string[];
    weightKg: number;
  } | null;
}

/** Writes the sample's fields into the scratch buffer from position 0. */
function writeFields(s: SampleInput): void {
  let mark = 0;
  int64(0x08, (s.tsMs ?? 0));
  mark = openMessage(0x12);
  double(0x09, (s.latitude ?? 0));
  double(0x11, (s.longitude ?? 0));
  double(0x19, (s.elevationM ?? 0));
  closeMessage(mark);
  mark = openMessage(0x1a);
  double(0x09, (s.xM ?? 0));
  double(0x11, (s.yM ?? 0));
  double(0x19, (s.zM ?? 0));
  double(0x21, (s.headingDeg ?? 0));
  closeMessage(mark);
  mark = openMessage(0x22);
  double(0x09, (s.linearMps ?? 0));
  double(0x11, (s.angularDps ?? 0));
  closeMessage(mark);
  mark = openMessage(0x2a);
  float(0x0d, (s.batteryPercent ?? 0));
  float(0x15, (s.voltageV ?? 0));
  bool(0x18, (s.charging ?? false));
  closeMessage(mark);
  string(0x32, (s.mode ?? ''));
  bool(0x38, (s.estop ?? false));
  if (s.mission != null) {
    mark = openMessage(0x42);
    string(0x0a, s.mission.runId);
    string(0x12, s.mission.missionState);
    float(0x1d, s.mission.progressPct);
    int32(0x20, s.mission.stepIndex);
    double(0x29, s.mission.remainingDistanceM);
    double(0x31, s.mission.etaS);
    closeMessage(mark);
  }
  mark = openMessage(0x4a);
  int32(0x08, (s.healthLevel ?? 0));
  for (const x of (s.faults ?? [])) {
    putTag(0x12);
    writeString(x);
  }
  float(0x1d, (s.cpuTempC ?? 0));
  closeMessage(mark);
  int32(0x50, (s.gpsFix ?? 0));
  string(0x5a, (s.mapId ?? ''));
  if (s.loads != null) {
    mark = openMessage(0x62);
    int32(0x08, s.loads.count);
    for (const x of s.loads.ids) {
      putTag(0x12);
      writeString(x);
    }
    for (const x of s.loads.types) {
      putTag(0x1a);
      writeString(x);
    }
    float(0x25, s.loads.weightKg);
    closeMessage(mark);
  }
}

/** An upper bound of the sample's encoded size: fixed-size fields, then text and list items. */
function sizeBound(s: SampleInput): number {
  let text = 0;
  let items = 0;
  text += (s.mode ?? '').length;
  if (s.mission != null) text += s.mission.runId.length;
  if (s.mission != null) text += s.mission.missionState.length;
  text += (s.mapId ?? '').length;
  items += (s.faults ?? []).length;
  for (const x of (s.faults ?? [])) text += x.length;
  if (s.loads != null) {
    items += s.loads.ids.length;
    for (const x of s.loads.ids) text += x.length;
  }
  if (s.loads != null) {
    items += s.loads.types.length;
    for (const x of s.loads.types) text += x.length;
  }
  return 544 + 3 * text + 8 * items;
}
// --- end of generated code ---
