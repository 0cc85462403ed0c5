/**
 * The hand-rolled JavaScript TelemetryBatch reader: protobuf bytes straight to RowBinary rows (and,
 * for live robots, JSON messages) in one pass, with no per-sample objects and no BigInt. It is what
 * runs when the C++ addon (native-bridge/) is not built or is disabled, and it is hand-written
 * because it is the hottest code of the gateway (a generic decoder builds a message object tree per
 * sample, several times the cost: bench/README.md#micro-benchmarks, decode-task.mjs).
 *
 * It must accept and reject exactly what protobuf-es `fromBinary(TelemetryBatchSchema)` does and
 * write exactly the rows of the reference path (reference.ts, driven by sample-table.ts);
 * test/telemetry/decoders.test.ts checks both, byte for byte, on valid, fuzzed and corrupt frames.
 * protobuf-es's rules, copied here on purpose:
 * - a known field is read by its declared type whatever the wire type in its tag;
 * - a sub-message's length is not checked against its parent: fields are read while the position is
 *   before the announced end, and only reading past the frame fails ("premature EOF");
 * - a repeated sub-message merges into the earlier one (scalars: last wins; faults: appended);
 * - varints: tags at most 5 bytes (no overflow of uint32), other varints at most 10 bytes; unknown
 *   fields of wire types 0, 1, 2, 3 (groups, nested up to the recursion budget) and 5 are skipped,
 *   4, 6 and 7 fail; field number 0 fails;
 * - strings must be valid UTF-8 (proto3), checked at every occurrence.
 * Rows: NaN is written as the canonical quiet NaN; ts_ms is the exact int64.
 * Robot strings are bounded after the sample is read, on its final values (sample-table.ts `bound`):
 * cut to a UTF-8 prefix of at most the field's bytes, a fault list to its first entries, each counted.
 */
import { type ByteWriter, BOUND_LIMITS, BOUND_REASONS, HEALTH_LEVEL_NAMES, utf8CutEnd } from '../sample/index.js';
import type { TaskOutput } from './task-output.js';

class Corrupt extends Error {}
const CORRUPT = new Corrupt('invalid TelemetryBatch');

// protobuf-es's recursion budget (100) minus the depth of the message being read.
const BATCH_SKIP_BUDGET = 99;
const SAMPLE_SKIP_BUDGET = 98;
const SUB_SKIP_BUDGET = 97;

// The reader's state: module-level so the hot functions take no closures (one thread runs one task).
let u8: Uint8Array = new Uint8Array(0);
let dv: DataView = new DataView(new ArrayBuffer(8));
let pos = 0;
let end = 0;
// varint64 result words.
let vLo = 0;
let vHi = 0;

// The frame's bounded-value counters (TaskOutput.frameBounds).
let bounds = new Uint32Array(BOUND_LIMITS.length);

/** The next byte, 0 past the frame (as protobuf-es reads `undefined` there); always advances. */
function rd(): number {
  const p = pos++;
  return p < end ? u8[p]! : 0;
}

function check(): void {
  if (pos > end) throw CORRUPT;
}

function uint32(): number {
  let b = rd();
  if ((b & 0x80) === 0) {
    check();
    return b;
  }
  let r = b & 0x7f;
  b = rd();
  r |= (b & 0x7f) << 7;
  if ((b & 0x80) === 0) {
    check();
    return r;
  }
  b = rd();
  r |= (b & 0x7f) << 14;
  if ((b & 0x80) === 0) {
    check();
    return r;
  }
  b = rd();
  r |= (b & 0x7f) << 21;
  if ((b & 0x80) === 0) {
    check();
    return r;
  }
  b = rd();
  r |= (b & 0x0f) << 28;
  for (let n = 5; (b & 0x80) !== 0 && n < 10; n++) b = rd();
  if ((b & 0x80) !== 0) throw CORRUPT;
  check();
  return r >>> 0;
}

/** 64-bit varint into (vLo, vHi), as protobuf-es's varint64read. */
function varint64(): void {
  let lo = 0;
  let hi = 0;
  let b = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    b = rd();
    lo |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      check();
      vLo = lo;
      vHi = hi;
      return;
    }
  }
  b = rd();
  lo |= (b & 0x0f) << 28;
  hi = (b & 0x70) >> 4;
  if ((b & 0x80) === 0) {
    check();
    vLo = lo;
    vHi = hi;
    return;
  }
  for (let shift = 3; shift <= 31; shift += 7) {
    b = rd();
    hi |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) {
      check();
      vLo = lo;
      vHi = hi;
      return;
    }
  }
  throw CORRUPT;
}

/** A tag: returns fieldNo * 8 + wireType (both validated). */
function tag(): number {
  const start = pos;
  const t = uint32();
  const n = pos - start;
  if (n > 5 || (n === 5 && u8[pos - 1]! > 0x0f)) throw CORRUPT;
  const fieldNo = t >>> 3;
  const wireType = t & 7;
  if (fieldNo <= 0 || wireType > 5) throw CORRUPT;
  return t >>> 0;
}

function skip(wireType: number, fieldNo: number, budget: number): void {
  switch (wireType) {
    case 0:
      while ((rd() & 0x80) !== 0) {
        // continuation bytes
      }
      break;
    case 1:
      pos += 8;
      break;
    case 5:
      pos += 4;
      break;
    case 2: {
      const len = uint32();
      pos += len;
      break;
    }
    case 3:
      if (budget <= 0) throw CORRUPT;
      for (;;) {
        const t = tag();
        const wt = t & 7;
        const fn = t >>> 3;
        if (wt === 4) {
          if (fn !== fieldNo) throw CORRUPT;
          break;
        }
        skip(wt, fn, budget - 1);
      }
      break;
    default:
      throw CORRUPT;
  }
  check();
}

function int32(): number {
  return uint32() | 0;
}

function bool(): number {
  if (pos < end && u8[pos]! < 0x80) return u8[pos++] !== 0 ? 1 : 0;
  varint64();
  return vLo !== 0 || vHi !== 0 ? 1 : 0;
}

function double(): number {
  if (pos + 8 > end) throw CORRUPT;
  const v = dv.getFloat64(pos, true);
  pos += 8;
  return v;
}

function float(): number {
  if (pos + 4 > end) throw CORRUPT;
  const v = dv.getFloat32(pos, true);
  pos += 4;
  return v;
}

/** Reads a length-delimited string, checks it is UTF-8 (WHATWG, fatal), returns its start. */
function string(): number {
  const len = uint32();
  const s = pos;
  pos += len;
  check();
  let i = s;
  const e = pos;
  while (i < e) {
    const b = u8[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      else if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      else if (b === 0xf4) hi = 0x8f;
    } else throw CORRUPT;
    if (i + need >= e) throw CORRUPT;
    const c1 = u8[i + 1]!;
    if (c1 < lo || c1 > hi) throw CORRUPT;
    for (let k = 2; k <= need; k++) {
      const c = u8[i + k]!;
      if (c < 0x80 || c > 0xbf) throw CORRUPT;
    }
    i += need + 1;
  }
  return s;
}

/** A sub-message field: its length, then its fields (protobuf-es's reading, see the file comment). */
function subEnd(): number {
  const len = uint32();
  return pos + len;
}

// --- output ----------------------------------------------------------------------------------------

function rbString(w: ByteWriter, s: number, e: number): void {
  w.varUint(e - s);
  w.copy(u8, s, e);
}

const HEX = '0123456789abcdef';

/** JSON has no NaN/Infinity: they become null; otherwise JavaScript's own number spelling. */
function num(w: ByteWriter, v: number): void {
  w.ascii(Number.isFinite(v) ? String(v) : 'null');
}

/** A JSON string of the UTF-8 bytes [s, e), escaped as JSON.stringify does. */
function jsonString(w: ByteWriter, s: number, e: number): void {
  w.u8(0x22);
  let run = s;
  for (let i = s; i < e; i++) {
    const c = u8[i]!;
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) continue;
    w.copy(u8, run, i);
    run = i + 1;
    if (c === 0x22) w.ascii('\\"');
    else if (c === 0x5c) w.ascii('\\\\');
    else if (c === 0x08) w.ascii('\\b');
    else if (c === 0x09) w.ascii('\\t');
    else if (c === 0x0a) w.ascii('\\n');
    else if (c === 0x0c) w.ascii('\\f');
    else if (c === 0x0d) w.ascii('\\r');
    else w.ascii(`\\u00${HEX[c >> 4]}${HEX[c & 15]}`);
  }
  w.copy(u8, run, e);
  w.u8(0x22);
}

/** Exact int64 text of its two's complement halves; BigInt only beyond 2^53 (never for epoch milliseconds). */
function int64Text(lo: number, hi: number): string {
  if (hi >= -0x200000 && hi < 0x200000) return String(hi * 4294967296 + lo);
  return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
}

/** Decodes one TelemetryBatch frame [start, frameEnd) of `bytes`; throws when it is not valid. */
export function decodeFrameFast(out: TaskOutput, bytes: Uint8Array, view: DataView, start: number, frameEnd: number, robotIndex: number, receivedAtMs: number): void {
  u8 = bytes;
  dv = view;
  pos = start;
  end = frameEnd;
  const rows = out.rows;
  const robot = out.rbRobot[robotIndex]!;
  const fleet = out.rbFleet[robotIndex]!;
  const prefix = out.livePrefix[robotIndex] ?? null;
  bounds = out.frameBounds;
  while (pos < end) {
    const t = tag();
    if (t >>> 3 !== 1) {
      // seq (2) and epoch (3) are uint64: read as varints whatever the wire type (as protobuf-es
      // reads a known scalar); the main thread already read them, the rows do not carry them.
      if (t >>> 3 === 2 || t >>> 3 === 3) varint64();
      else skip(t & 7, t >>> 3, BATCH_SKIP_BUDGET);
      continue;
    }
    readSample(subEnd());
    boundSample();
    const rowStart = rows.pos;
    writeRow(rows, robot, fleet, receivedAtMs);
    out.rowDone(robotIndex, rowStart, tsMsHi, tsMsLo);
    if (prefix !== null) {
      const live = out.live!;
      const liveStart = live.pos;
      writeLive(live, prefix, receivedAtMs);
      out.liveDone(robotIndex, liveStart);
    }
  }
}

// --- generated from the field table by `npm run gen` (scripts/codegen/fast-reader.mjs): do not edit below ---
// One sample's values (reset per sample; strings are [start, end) views of the frame).
const d = new Float64Array(11);
const fl = new Float32Array(5); // Float32: exactly what the wire held
const D_LAT = 0, D_LON = 1, D_ELEVATION_M = 2, D_POSE_X_M = 3, D_POSE_Y_M = 4, D_POSE_Z_M = 5, D_HEADING_DEG = 6, D_SPEED_MPS = 7, D_YAW_RATE_DPS = 8, D_REMAINING_DISTANCE_M = 9, D_ETA_S = 10;
const F_BATTERY_PCT = 0, F_VOLTAGE_V = 1, F_PROGRESS_PCT = 2, F_CPU_TEMP_C = 3, F_LOAD_WEIGHT_KG = 4;
let tsMsLo = 0;
let tsMsHi = 0;
let charging = 0;
let modeS = 0;
let modeE = 0;
let estop = 0;
let gpsFix = 0;
let missionRunIdS = 0;
let missionRunIdE = 0;
let missionStateS = 0;
let missionStateE = 0;
let stepIndex = 0;
let healthLevel = 0;
let faults = new Int32Array(64); // start, end pairs
let faultsCount = 0;
let mapIdS = 0;
let mapIdE = 0;
let loadCount = 0;
let loadIds = new Int32Array(64); // start, end pairs
let loadIdsCount = 0;
let loadTypes = new Int32Array(64); // start, end pairs
let loadTypesCount = 0;
const BOUND_MODE = BOUND_REASONS.indexOf('mode_too_long');
const MAX_MODE = BOUND_LIMITS[BOUND_MODE]!;
const BOUND_MISSION_RUN_ID = BOUND_REASONS.indexOf('mission_run_id_too_long');
const MAX_MISSION_RUN_ID = BOUND_LIMITS[BOUND_MISSION_RUN_ID]!;
const BOUND_MISSION_STATE = BOUND_REASONS.indexOf('mission_state_too_long');
const MAX_MISSION_STATE = BOUND_LIMITS[BOUND_MISSION_STATE]!;
const BOUND_FAULTS = BOUND_REASONS.indexOf('faults_too_long');
const MAX_FAULTS = BOUND_LIMITS[BOUND_FAULTS]!;
const BOUND_FAULTS_ITEMS = BOUND_REASONS.indexOf('faults_too_many');
const MAX_FAULTS_ITEMS = BOUND_LIMITS[BOUND_FAULTS_ITEMS]!;
const BOUND_MAP_ID = BOUND_REASONS.indexOf('map_id_too_long');
const MAX_MAP_ID = BOUND_LIMITS[BOUND_MAP_ID]!;
const BOUND_LOAD_IDS = BOUND_REASONS.indexOf('load_ids_too_long');
const MAX_LOAD_IDS = BOUND_LIMITS[BOUND_LOAD_IDS]!;
const BOUND_LOAD_IDS_ITEMS = BOUND_REASONS.indexOf('load_ids_too_many');
const MAX_LOAD_IDS_ITEMS = BOUND_LIMITS[BOUND_LOAD_IDS_ITEMS]!;
const BOUND_LOAD_TYPES = BOUND_REASONS.indexOf('load_types_too_long');
const MAX_LOAD_TYPES = BOUND_LIMITS[BOUND_LOAD_TYPES]!;
const BOUND_LOAD_TYPES_ITEMS = BOUND_REASONS.indexOf('load_types_too_many');
const MAX_LOAD_TYPES_ITEMS = BOUND_LIMITS[BOUND_LOAD_TYPES_ITEMS]!;
const ENUM_MAX = HEALTH_LEVEL_NAMES.length - 1;
const ENUM_JSON = HEALTH_LEVEL_NAMES.map((n) => `"${n}"`);

function resetSample(): void {
  d.fill(0);
  fl.fill(0);
  tsMsLo = 0;
  tsMsHi = 0;
  charging = 0;
  modeS = 0;
  modeE = 0;
  estop = 0;
  gpsFix = 0;
  missionRunIdS = 0;
  missionRunIdE = 0;
  missionStateS = 0;
  missionStateE = 0;
  stepIndex = 0;
  healthLevel = 0;
  faultsCount = 0;
  mapIdS = 0;
  mapIdE = 0;
  loadCount = 0;
  loadIdsCount = 0;
  loadTypesCount = 0;
}

function readPosition(msgEnd: number): void {
  while (pos < msgEnd) {
    const t = tag();
    switch (t >>> 3) {
      case 1: d[D_LAT] = double(); break;
      case 2: d[D_LON] = double(); break;
      case 3: d[D_ELEVATION_M] = double(); break;
      default: skip(t & 7, t >>> 3, SUB_SKIP_BUDGET);
    }
  }
}

function readPose(msgEnd: number): void {
  while (pos < msgEnd) {
    const t = tag();
    switch (t >>> 3) {
      case 1: d[D_POSE_X_M] = double(); break;
      case 2: d[D_POSE_Y_M] = double(); break;
      case 3: d[D_POSE_Z_M] = double(); break;
      case 4: d[D_HEADING_DEG] = double(); break;
      default: skip(t & 7, t >>> 3, SUB_SKIP_BUDGET);
    }
  }
}

function readVelocity(msgEnd: number): void {
  while (pos < msgEnd) {
    const t = tag();
    switch (t >>> 3) {
      case 1: d[D_SPEED_MPS] = double(); break;
      case 2: d[D_YAW_RATE_DPS] = double(); break;
      default: skip(t & 7, t >>> 3, SUB_SKIP_BUDGET);
    }
  }
}

function readBattery(msgEnd: number): void {
  while (pos < msgEnd) {
    const t = tag();
    switch (t >>> 3) {
      case 1: fl[F_BATTERY_PCT] = float(); break;
      case 2: fl[F_VOLTAGE_V] = float(); break;
      case 3: charging = bool(); break;
      default: skip(t & 7, t >>> 3, SUB_SKIP_BUDGET);
    }
  }
}

function readMission(msgEnd: number): void {
  while (pos < msgEnd) {
    const t = tag();
    switch (t >>> 3) {
      case 1: missionRunIdS = string(); missionRunIdE = pos; break;
      case 2: missionStateS = string(); missionStateE = pos; break;
      case 3: fl[F_PROGRESS_PCT] = float(); break;
      case 4: stepIndex = int32(); break;
      case 5: d[D_REMAINING_DISTANCE_M] = double(); break;
      case 6: d[D_ETA_S] = double(); break;
      default: skip(t & 7, t >>> 3, SUB_SKIP_BUDGET);
    }
  }
}

function readHealth(msgEnd: number): void {
  while (pos < msgEnd) {
    const t = tag();
    switch (t >>> 3) {
      case 1: healthLevel = int32(); break;
      case 2: {
        const s = string();
        if (faultsCount * 2 + 2 > faults.length) {
          const grown = new Int32Array(faults.length * 2);
          grown.set(faults);
          faults = grown;
        }
        faults[faultsCount * 2] = s;
        faults[faultsCount * 2 + 1] = pos;
        faultsCount++;
        break;
      }
      case 3: fl[F_CPU_TEMP_C] = float(); break;
      default: skip(t & 7, t >>> 3, SUB_SKIP_BUDGET);
    }
  }
}

function readLoads(msgEnd: number): void {
  while (pos < msgEnd) {
    const t = tag();
    switch (t >>> 3) {
      case 1: loadCount = int32(); break;
      case 2: {
        const s = string();
        if (loadIdsCount * 2 + 2 > loadIds.length) {
          const grown = new Int32Array(loadIds.length * 2);
          grown.set(loadIds);
          loadIds = grown;
        }
        loadIds[loadIdsCount * 2] = s;
        loadIds[loadIdsCount * 2 + 1] = pos;
        loadIdsCount++;
        break;
      }
      case 3: {
        const s = string();
        if (loadTypesCount * 2 + 2 > loadTypes.length) {
          const grown = new Int32Array(loadTypes.length * 2);
          grown.set(loadTypes);
          loadTypes = grown;
        }
        loadTypes[loadTypesCount * 2] = s;
        loadTypes[loadTypesCount * 2 + 1] = pos;
        loadTypesCount++;
        break;
      }
      case 4: fl[F_LOAD_WEIGHT_KG] = float(); break;
      default: skip(t & 7, t >>> 3, SUB_SKIP_BUDGET);
    }
  }
}

function readSample(msgEnd: number): void {
  resetSample();
  while (pos < msgEnd) {
    const t = tag();
    switch (t >>> 3) {
      case 1: {
        varint64();
        tsMsLo = vLo >>> 0;
        tsMsHi = vHi | 0;
        break;
      }
      case 2: readPosition(subEnd()); break;
      case 3: readPose(subEnd()); break;
      case 4: readVelocity(subEnd()); break;
      case 5: readBattery(subEnd()); break;
      case 6: modeS = string(); modeE = pos; break;
      case 7: estop = bool(); break;
      case 8: readMission(subEnd()); break;
      case 9: readHealth(subEnd()); break;
      case 10: gpsFix = int32(); break;
      case 11: mapIdS = string(); mapIdE = pos; break;
      case 12: readLoads(subEnd()); break;
      default: skip(t & 7, t >>> 3, SAMPLE_SKIP_BUDGET);
    }
  }
}

/** Applies the string bounds to the sample just read (its final values, as the reference path does). */
function boundSample(): void {
  let c = 0;
  c = utf8CutEnd(u8, modeS, modeE, MAX_MODE);
  if (c !== modeE) {
    modeE = c;
    bounds[BOUND_MODE]!++;
  }
  c = utf8CutEnd(u8, missionRunIdS, missionRunIdE, MAX_MISSION_RUN_ID);
  if (c !== missionRunIdE) {
    missionRunIdE = c;
    bounds[BOUND_MISSION_RUN_ID]!++;
  }
  c = utf8CutEnd(u8, missionStateS, missionStateE, MAX_MISSION_STATE);
  if (c !== missionStateE) {
    missionStateE = c;
    bounds[BOUND_MISSION_STATE]!++;
  }
  if (faultsCount > MAX_FAULTS_ITEMS) {
    bounds[BOUND_FAULTS_ITEMS]! += faultsCount - MAX_FAULTS_ITEMS;
    faultsCount = MAX_FAULTS_ITEMS;
  }
  for (let i = 0; i < faultsCount; i++) {
    const e = faults[i * 2 + 1]!;
    c = utf8CutEnd(u8, faults[i * 2]!, e, MAX_FAULTS);
    if (c !== e) {
      faults[i * 2 + 1] = c;
      bounds[BOUND_FAULTS]!++;
    }
  }
  c = utf8CutEnd(u8, mapIdS, mapIdE, MAX_MAP_ID);
  if (c !== mapIdE) {
    mapIdE = c;
    bounds[BOUND_MAP_ID]!++;
  }
  if (loadIdsCount > MAX_LOAD_IDS_ITEMS) {
    bounds[BOUND_LOAD_IDS_ITEMS]! += loadIdsCount - MAX_LOAD_IDS_ITEMS;
    loadIdsCount = MAX_LOAD_IDS_ITEMS;
  }
  for (let i = 0; i < loadIdsCount; i++) {
    const e = loadIds[i * 2 + 1]!;
    c = utf8CutEnd(u8, loadIds[i * 2]!, e, MAX_LOAD_IDS);
    if (c !== e) {
      loadIds[i * 2 + 1] = c;
      bounds[BOUND_LOAD_IDS]!++;
    }
  }
  if (loadTypesCount > MAX_LOAD_TYPES_ITEMS) {
    bounds[BOUND_LOAD_TYPES_ITEMS]! += loadTypesCount - MAX_LOAD_TYPES_ITEMS;
    loadTypesCount = MAX_LOAD_TYPES_ITEMS;
  }
  for (let i = 0; i < loadTypesCount; i++) {
    const e = loadTypes[i * 2 + 1]!;
    c = utf8CutEnd(u8, loadTypes[i * 2]!, e, MAX_LOAD_TYPES);
    if (c !== e) {
      loadTypes[i * 2 + 1] = c;
      bounds[BOUND_LOAD_TYPES]!++;
    }
  }
}

/** The sample's RowBinary row, columns in table order. */
function writeRow(w: ByteWriter, robot: Uint8Array, fleet: Uint8Array, receivedAtMs: number): void {
  w.raw(robot);
  w.raw(fleet);
  w.i64parts(tsMsLo, tsMsHi);
  w.i64(receivedAtMs);
  w.f64c(d[D_LAT]!);
  w.f64c(d[D_LON]!);
  w.f64c(d[D_ELEVATION_M]!);
  w.f64c(d[D_POSE_X_M]!);
  w.f64c(d[D_POSE_Y_M]!);
  w.f64c(d[D_POSE_Z_M]!);
  w.f64c(d[D_HEADING_DEG]!);
  w.f64c(d[D_SPEED_MPS]!);
  w.f64c(d[D_YAW_RATE_DPS]!);
  w.f32c(fl[F_BATTERY_PCT]!);
  w.f32c(fl[F_VOLTAGE_V]!);
  w.u8(charging);
  rbString(w, modeS, modeE);
  w.u8(estop);
  w.i32(gpsFix);
  rbString(w, missionRunIdS, missionRunIdE);
  rbString(w, missionStateS, missionStateE);
  w.f32c(fl[F_PROGRESS_PCT]!);
  w.i32(stepIndex);
  w.f64c(d[D_REMAINING_DISTANCE_M]!);
  w.f64c(d[D_ETA_S]!);
  w.u8(healthLevel >= 0 && healthLevel <= ENUM_MAX ? healthLevel : 0);
  w.varUint(faultsCount);
  for (let i = 0; i < faultsCount; i++) rbString(w, faults[i * 2]!, faults[i * 2 + 1]!);
  w.f32c(fl[F_CPU_TEMP_C]!);
  rbString(w, mapIdS, mapIdE);
  w.i32(loadCount);
  w.varUint(loadIdsCount);
  for (let i = 0; i < loadIdsCount; i++) rbString(w, loadIds[i * 2]!, loadIds[i * 2 + 1]!);
  w.varUint(loadTypesCount);
  for (let i = 0; i < loadTypesCount; i++) rbString(w, loadTypes[i * 2]!, loadTypes[i * 2 + 1]!);
  w.f32c(fl[F_LOAD_WEIGHT_KG]!);
}

/** The live "sample" message (live-json.ts writes the same from the reference path's values). */
function writeLive(w: ByteWriter, prefix: Uint8Array, receivedAtMs: number): void {
  w.raw(prefix);
  w.ascii(int64Text(tsMsLo, tsMsHi));
  w.ascii(',"received_at_ms":');
  num(w, receivedAtMs);
  w.ascii(',"latitude":');
  num(w, d[D_LAT]!);
  w.ascii(',"longitude":');
  num(w, d[D_LON]!);
  w.ascii(',"elevation_m":');
  num(w, d[D_ELEVATION_M]!);
  w.ascii(',"pose":{"x_m":');
  num(w, d[D_POSE_X_M]!);
  w.ascii(',"y_m":');
  num(w, d[D_POSE_Y_M]!);
  w.ascii(',"z_m":');
  num(w, d[D_POSE_Z_M]!);
  w.ascii(',"heading_deg":');
  num(w, d[D_HEADING_DEG]!);
  w.ascii('},"velocity":{"linear_mps":');
  num(w, d[D_SPEED_MPS]!);
  w.ascii(',"angular_dps":');
  num(w, d[D_YAW_RATE_DPS]!);
  w.ascii('},"battery":{"percent":');
  num(w, fl[F_BATTERY_PCT]!);
  w.ascii(',"voltage_v":');
  num(w, fl[F_VOLTAGE_V]!);
  w.ascii(charging ? ',"charging":true},"mode":' : ',"charging":false},"mode":');
  jsonString(w, modeS, modeE);
  w.ascii(estop ? ',"estop":true,"gps_fix":' : ',"estop":false,"gps_fix":');
  w.ascii(String(gpsFix));
  if (missionRunIdE === missionRunIdS) {
    w.ascii(',"mission":null');
  } else {
    w.ascii(',"mission":{"run_id":');
    jsonString(w, missionRunIdS, missionRunIdE);
    w.ascii(',"mission_state":');
    jsonString(w, missionStateS, missionStateE);
    w.ascii(',"mission_progress_pct":');
    num(w, fl[F_PROGRESS_PCT]!);
    w.ascii(',"current_step_index":');
    w.ascii(String(stepIndex));
    w.ascii(',"remaining_distance_m":');
    num(w, d[D_REMAINING_DISTANCE_M]!);
    w.ascii(',"estimated_time_remaining_s":');
    num(w, d[D_ETA_S]!);
    w.ascii('}');
  }
  w.ascii(',"health":{"level":');
  w.ascii(ENUM_JSON[healthLevel >= 0 && healthLevel <= ENUM_MAX ? healthLevel : 0]!);
  w.ascii(',"faults":[');
  for (let i = 0; i < faultsCount; i++) {
    if (i > 0) w.u8(0x2c);
    jsonString(w, faults[i * 2]!, faults[i * 2 + 1]!);
  }
  w.ascii('],"cpu_temp_c":');
  num(w, fl[F_CPU_TEMP_C]!);
  w.ascii('},"map_id":');
  jsonString(w, mapIdS, mapIdE);
  w.ascii(',"loads":{"count":');
  w.ascii(String(loadCount));
  w.ascii(',"ids":[');
  for (let i = 0; i < loadIdsCount; i++) {
    if (i > 0) w.u8(0x2c);
    jsonString(w, loadIds[i * 2]!, loadIds[i * 2 + 1]!);
  }
  w.ascii('],"types":[');
  for (let i = 0; i < loadTypesCount; i++) {
    if (i > 0) w.u8(0x2c);
    jsonString(w, loadTypes[i * 2]!, loadTypes[i * 2 + 1]!);
  }
  w.ascii('],"weight_kg":');
  num(w, fl[F_LOAD_WEIGHT_KG]!);
  w.ascii('}}');
}
// --- end of generated code ---
