/**
 * The three telemetry decoders agree byte for byte: the reference (protobuf-es + the field table),
 * the hand-rolled JS reader and the C++ addon get the same valid, edge-case, fuzzed and corrupt
 * frames and must return identical rows, snapshots, live messages and errors (and the same frames
 * rejected as protobuf-es rejects).
 *
 * The addon must be built (`npm run build:native`) unless FLEETGW_TELEMETRY_DECODER=js, the
 * fallback run, which compares the JS reader with the reference only. FLEETGW_FUZZ_TASKS sets how
 * many fuzzed tasks run (default 400); the seed is fixed, so a failure names a reproducible task.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { HealthLevel, TelemetryBatchSchema, TelemetrySampleSchema, type TelemetrySample } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { encodeSample, type SampleInput } from '../../src/agent/sample-encoder.js';
import { DECODER_ENV, loadNative } from '../../src/telemetry/decode/native.js';
import { decoderOf, type DecoderKind } from '../../src/telemetry/decode/select.js';
import { FramePacker } from '../../src/telemetry/decode/frame-packer.js';
import type { DecodeResult, DecodeTask } from '../../src/telemetry/decode/worker-protocol.js';
import { BOUND_REASONS } from '../../src/telemetry/sample/sample-table.js';
import { encodeBatch, sample } from './helpers.js';
import { prng } from '../support/prng.js';

const fallbackRun = process.env[DECODER_ENV] === 'js';
const kinds: DecoderKind[] = fallbackRun ? ['reference', 'js'] : ['reference', 'js', 'native'];
const FUZZ_TASKS = Number(process.env.FLEETGW_FUZZ_TASKS ?? 400);


interface Frame {
  robot: number;
  bytes: Uint8Array;
}

const ROBOTS = ['r-0', 'robot "1"\\', 'r\t2', 'ロボット-3'];
const FLEETS = ['f-a', 'f-b', 'f-a', 'f\n'];

function taskOf(frames: Frame[], liveMask: number[] | null, receivedAt = 1_700_000_000_123): DecodeTask {
  const packer = new FramePacker(64);
  for (const f of frames) packer.add(ROBOTS[f.robot]!, FLEETS[f.robot]!, f.bytes, receivedAt + f.robot);
  const packed = packer.take();
  const live = liveMask ? Uint8Array.from(packed.robotIds.map((id) => liveMask[ROBOTS.indexOf(id)] ?? 0)) : null;
  return { ...packed, live };
}

/** Copies the task (its frames buffer is read, not transferred, but each decoder gets its own). */
function copyTask(t: DecodeTask): DecodeTask {
  return { ...t, frames: (t.frames as ArrayBuffer).slice(0), robotIds: [...t.robotIds], fleetIds: [...t.fleetIds], live: t.live ? Uint8Array.from(t.live) : null };
}

/** Everything a result says, in comparable form (buffers as hex). */
function comparable(r: DecodeResult): unknown {
  return {
    rows: Buffer.from(r.rows).toString('hex'),
    rowCount: r.rowCount,
    snapshots: [...r.snapshots],
    snapshotTs: [...r.snapshotTs],
    live: r.live ? { data: Buffer.from(r.live.data).toString('utf8'), index: [...r.live.index] } : null,
    frames: r.frames,
    corruptFrames: r.corruptFrames,
    bounded: r.bounded ? [...r.bounded] : null,
    errors: r.errors,
  };
}

function decodeAll(task: DecodeTask): Record<DecoderKind, unknown> {
  const out = {} as Record<DecoderKind, unknown>;
  for (const k of kinds) out[k] = comparable(decoderOf(k).decode(copyTask(task), 0));
  return out;
}

function expectSame(task: DecodeTask, label: string): DecodeResult {
  const all = decodeAll(task);
  for (const k of kinds.slice(1)) expect(all[k], `${label}: ${k} vs reference`).toEqual(all.reference);
  return decoderOf('reference').decode(copyTask(task), 0);
}

const batchOf = (samples: TelemetrySample[]): Uint8Array => toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples }));

/** Samples at the edges of every type. */
function edgeSamples(): TelemetrySample[] {
  const odd = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 5e-324, 1.7976931348623157e308, 1e21, 1e-7, 123456789012345680000, 0.1, -1.5e-10];
  const out: TelemetrySample[] = [];
  for (let i = 0; i < odd.length; i++) {
    const v = odd[i]!;
    out.push(create(TelemetrySampleSchema, {
      tsMs: [0n, -1n, 9007199254740993n, -9223372036854775808n, 9223372036854775807n, 1_700_000_000_000n][i % 6]!,
      position: { latitude: v, longitude: -v, elevationM: v * 3 },
      pose: { xM: v, yM: 1 / 3, zM: -2.5, headingDeg: v },
      velocity: { linearMps: v, angularDps: Math.PI },
      battery: { percent: Math.fround(v), voltageV: Math.fround(48.123456789), charging: i % 2 === 0 },
      mode: ['', 'autonomous', 'quote"back\\slash', 'ctl\u0001\u001f\b\f\n\r\t', 'ünïcödé ✓ 𝄞', '\u2028\u2029\u007f'][i % 6]!,
      estop: i % 3 === 0,
      mission: i % 4 === 0 ? undefined : { runId: i % 2 ? `run-${i}` : '', missionState: 'running\u0000', progressPct: Math.fround(v), stepIndex: [0, -1, 2147483647, -2147483648][i % 4]!, remainingDistanceM: v, etaS: 0.000001 },
      health: { level: [HealthLevel.OK, HealthLevel.WARN, HealthLevel.ERROR, 7 as HealthLevel, -3 as HealthLevel][i % 5]!, faults: Array.from({ length: i % 4 }, (_, k) => `f${k}"\\`), cpuTempC: Math.fround(v) },
      gpsFix: [0, 4, -7, 2147483647][i % 4]!,
      mapId: ['', 'floor-1', 'quote"back\\slash', 'ünïcödé 𝄞'][i % 4]!,
      ...(i % 3 === 0 ? {} : { loads: { count: [0, 1, -1, 2147483647][i % 4]!, ids: Array.from({ length: i % 3 }, (_, k) => `id${k}"\\`), types: i % 2 ? ['EPAL'] : [], weightKg: Math.fround(v) } }),
    }));
  }
  return out;
}

function randomSample(rand: () => number, ts: number): TelemetrySample {
  const num = (): number => {
    const r = rand();
    if (r < 0.05) return [Number.NaN, Number.POSITIVE_INFINITY, -0, 0][Math.floor(rand() * 4)]!;
    if (r < 0.3) return Math.round((rand() - 0.5) * 1e6) / 100;
    if (r < 0.5) return (rand() - 0.5) * 10 ** Math.floor(rand() * 40 - 20);
    return rand() * 360;
  };
  const text = (): string => {
    const pool = ['a', 'Z', ' ', '"', '\\', '\n', '\u0007', 'é', '✓', '𝄞', '\u00ff', '-', '_'];
    let s = '';
    const n = Math.floor(rand() * 8);
    for (let i = 0; i < n; i++) s += pool[Math.floor(rand() * pool.length)];
    return s;
  };
  return create(TelemetrySampleSchema, {
    tsMs: BigInt(ts),
    ...(rand() < 0.9 ? { position: { latitude: num(), longitude: num(), elevationM: num() } } : {}),
    ...(rand() < 0.9 ? { pose: { xM: num(), yM: num(), zM: num(), headingDeg: num() } } : {}),
    ...(rand() < 0.9 ? { velocity: { linearMps: num(), angularDps: num() } } : {}),
    ...(rand() < 0.9 ? { battery: { percent: num(), voltageV: num(), charging: rand() < 0.5 } } : {}),
    mode: text(),
    estop: rand() < 0.2,
    ...(rand() < 0.6 ? { mission: { runId: text(), missionState: text(), progressPct: num(), stepIndex: Math.floor((rand() - 0.5) * 1e6), remainingDistanceM: num(), etaS: num() } } : {}),
    ...(rand() < 0.9 ? { health: { level: Math.floor(rand() * 6) as HealthLevel, faults: Array.from({ length: Math.floor(rand() * 3) }, text), cpuTempC: num() } } : {}),
    gpsFix: Math.floor(rand() * 6),
    mapId: text(),
    ...(rand() < 0.5 ? { loads: { count: Math.floor(rand() * 5), ids: Array.from({ length: Math.floor(rand() * 3) }, text), types: Array.from({ length: Math.floor(rand() * 3) }, text), weightKg: num() } } : {}),
  });
}

/** Random damage to a valid frame: flipped, inserted, removed, truncated bytes. */
function mutate(rand: () => number, bytes: Uint8Array): Uint8Array {
  const b = [...bytes];
  const edits = 1 + Math.floor(rand() * 4);
  for (let e = 0; e < edits && b.length > 0; e++) {
    const at = Math.floor(rand() * b.length);
    const kind = rand();
    if (kind < 0.4) b[at] = Math.floor(rand() * 256);
    else if (kind < 0.6) b[at] = b[at]! ^ (1 << Math.floor(rand() * 8));
    else if (kind < 0.75) b.splice(at, 0, Math.floor(rand() * 256));
    else if (kind < 0.9) b.splice(at, 1);
    else b.length = at;
  }
  return Uint8Array.from(b);
}

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ''), 'hex'));

/** Hand-made frames on protobuf-es's edge rules (see src/telemetry/decode/fast-reader.ts). */
const EDGE_FRAMES: Record<string, Uint8Array> = {
  empty: new Uint8Array(0),
  emptySample: hex('0a00'),
  knownFieldWrongWireType: hex('0a 03 0d 96 01'), // ts_ms with wire type 5: read as a varint anyway
  positionAsVarint: hex('0a 04 10 02 09 00'), // field 2 with wire type 0: length 2, then 2 bytes of fields
  subMessageOverrun: hex('0a 0c 12 02 09 00 00 00 00 00 00 00 f0 3f'), // latitude straddles the announced end
  repeatedPositionMerges: hex('0a 16 12 09 09 00000000 0000f03f 12 09 11 00000000 00000040'),
  unknownAllWireTypes: hex('0a 16 58 01 61 0000000000000000 6a 01 ff 75 00000000 7b 08 01 7c'),
  unknownGroupUnclosed: hex('0a 03 7b 08 01'),
  groupWrongEnd: hex('0a 04 7b 08 01 84 01'),
  endGroupAlone: hex('0a 01 7c'),
  wireType6: hex('0a 01 7e'),
  fieldZero: hex('0a 02 00 01'),
  // Issue 14: TelemetryBatch.seq (2) and epoch (3), before or after the samples, any wire type.
  seqEpochFirst: hex('10 05 18 e4 00 0a 03 08 96 01'),
  seqEpochLast: hex('0a 03 08 96 01 10 05 18 e4 00'),
  seqMaxVarint: hex('10 ffffffffffffffffff01 0a 00'),
  seqVarintTooLong: hex('10 ffffffffffffffffffff01 0a 00'),
  seqTruncated: hex('0a 00 10 ff'),
  seqAsLengthDelimited: hex('12 02 0a 00 0a 00'), // read as the varint 2, then 0a 00 is a sample
  epochAsFixed64: hex('19 01 0a 00'), // read as the varint 1, then an empty sample
  seqRepeated: hex('10 01 10 02 18 07 18 08 0a 00'),
  tagOverflow: hex('0a 06 f8 ff ff ff 1f 00'),
  tagFiveBytesOk: hex('0a 06 f8 ff ff ff 0f 00'),
  varintElevenBytes: hex('0a 0c 08 ff ff ff ff ff ff ff ff ff ff 01'),
  varintTenBytes: hex('0a 0b 08 ff ff ff ff ff ff ff ff ff 01'),
  // Ends one byte short: the byte after the frame (the next frame's header, robot 2) must not end it.
  varintCutAtFrameEnd: hex('0a 0a 08 ff ff ff ff ff ff ff ff ff'),
  uint32CutAtFrameEnd: hex('0a 02 50 80'), // gps_fix's second byte would be the next frame's header
  boolLong: hex('0a 05 38 80 80 80 00'),
  int32Negative: hex('0a 0b 50 ff ff ff ff ff ff ff ff ff 01'),
  badUtf8: hex('0a 04 32 02 c3 28'),
  surrogateUtf8: hex('0a 05 32 03 ed a0 80'),
  overlongUtf8: hex('0a 04 32 02 c0 80'),
  utf8Max: hex('0a 06 32 04 f4 8f bf bf'),
  utf8TooHigh: hex('0a 06 32 04 f4 90 80 80'),
  truncatedDouble: hex('0a 05 12 03 09 00 00'),
  stringPastEnd: hex('0a 03 32 05 61'),
  lengthPastFrame: hex('0a 7f 08 01'),
  unknownTopLevel: hex('12 03 01 02 03 0a 02 08 05'),
  faultsMerge: hex('0a 0c 4a 04 12 02 61 62 4a 04 12 02 63 64'),
  deepGroups: Uint8Array.from([0x0a, 0xc8, 0x01, ...Array<number>(100).fill(0x7b), ...Array<number>(100).fill(0x7c)]),
};

describe('telemetry decoders agree byte for byte', () => {
  it(fallbackRun ? 'runs without the addon (fallback run)' : 'loads the C++ addon', () => {
    if (!fallbackRun) expect(loadNative().reason).toBe('loaded');
    else expect(loadNative().binding).toBeNull();
  });

  it('valid frames: helpers, the agent encoder, every edge value, live for some robots', () => {
    const agentSample: SampleInput = {
      tsMs: 1_800_000_000_000, latitude: 52.1, longitude: 5.1, elevationM: 3, xM: 1, yM: 2, zM: 0, headingDeg: 90,
      linearMps: 1, angularDps: 0, batteryPercent: 50.5, voltageV: 48, charging: false, mode: 'paused', estop: true,
      mission: { runId: 'run-x', missionState: 'running', progressPct: 12.5, stepIndex: -3, remainingDistanceM: 7, etaS: 9 },
      healthLevel: HealthLevel.WARN, faults: ['f', 'g'], cpuTempC: 40, gpsFix: 1,
      mapId: 'hall-2', loads: { count: 3, ids: ['p-1', '', 'p"3'], types: ['EPAL', 'box', ''], weightKg: 812.5 },
    };
    const enc = encodeSample(agentSample);
    // TelemetryBatch.samples (field 1, length-delimited); the sample is over 127 bytes: 2-byte length.
    expect(enc.length).toBeGreaterThan(127);
    expect(enc.length).toBeLessThan(16384);
    const agentBatch = Uint8Array.from([0x0a, (enc.length & 0x7f) | 0x80, enc.length >> 7, ...enc]);
    const frames: Frame[] = [
      { robot: 0, bytes: encodeBatch(1_000, 5) },
      { robot: 1, bytes: batchOf(edgeSamples()) },
      { robot: 2, bytes: agentBatch },
      { robot: 3, bytes: batchOf([sample(5, 1, { faults: [], mode: '', runId: '' })]) },
      { robot: 0, bytes: encodeBatch(500, 2) },
    ];
    const r = expectSame(taskOf(frames, [1, 1, 0, 1]), 'valid');
    expect(r.corruptFrames).toBe(0);
    expect(r.rowCount).toBe(5 + 11 + 1 + 1 + 2);
    expect(r.live?.index.length).toBe(3 * (5 + 11 + 1 + 2));
    expectSame(taskOf(frames, null), 'valid, no live');
  });

  it('over-long robot strings are cut alike (UTF-8 boundary, list length) and counted by reason', () => {
    const long = (n: number, unit: string): string => unit.repeat(n);
    const over = create(TelemetrySampleSchema, {
      tsMs: 1_800_000_000_000n,
      // 63 ASCII bytes then a 3-byte character: the cut at 64 must fall before it.
      mode: `${long(63, 'm')}✓tail`,
      mission: { runId: long(200, 'r'), missionState: long(40, 'é') /* 80 bytes */ },
      health: { faults: [...Array.from({ length: 70 }, (_, i) => `f${i}`), long(100, '𝄞')].reverse() },
      mapId: long(65, 'a'),
      // 20 ids, the first over 64 bytes: one cut, 4 past 16; 17 types: 1 past 16.
      loads: { count: 20, ids: [long(40, 'é'), ...Array.from({ length: 19 }, (_, i) => `p${i}`)], types: Array.from({ length: 17 }, () => 'EPAL'), weightKg: 1 },
    });
    const fits = create(TelemetrySampleSchema, { tsMs: 1_800_000_000_001n, mode: long(64, 'm'), mission: { runId: long(64, 'r'), missionState: long(32, 'é') }, health: { faults: Array.from({ length: 64 }, () => long(64, 'x')) } });
    const task = taskOf([{ robot: 0, bytes: batchOf([over, fits]) }, { robot: 2, bytes: batchOf([over]) }, { robot: 1, bytes: EDGE_FRAMES.badUtf8! }], [1, 1, 1, 1]);
    const r = expectSame(task, 'over-long strings');
    expect(r.rowCount).toBe(3);
    // Per robot index (packed in order of appearance), by BOUND_REASONS index: mode, run id, state,
    // one fault (the first kept one is the long one), the map id, one load id, 7 faults past 64,
    // 4 load ids and 1 load type past 16.
    const perRobot = (i: number): number[] => [[0, 1], [1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [7, 7], [8, 4], [9, 1]].flatMap(([reason, n]) => [i, reason!, n!]);
    expect(BOUND_REASONS.slice(4)).toEqual(['map_id_too_long', 'load_ids_too_long', 'load_types_too_long', 'faults_too_many', 'load_ids_too_many', 'load_types_too_many']);
    expect([...r.bounded!]).toEqual([...perRobot(0), ...perRobot(1)]);
    const live = Buffer.from(r.live!.data).toString('utf8');
    expect(live).toContain(`"mode":"${long(63, 'm')}"`);
    expect(live).toContain(`"run_id":"${long(64, 'r')}"`);
    expect(live).toContain(`"mission_state":"${long(32, 'é')}"`);
    expect(live).toContain(`"faults":["${long(16, '𝄞')}","f69"`);
    expect(live).toContain(`"map_id":"${long(64, 'a')}","loads":{"count":20,"ids":["${long(32, 'é')}","p0",`);
  });

  it.each(Object.keys(EDGE_FRAMES))('protobuf-es edge rule: %s', (name) => {
    const frames: Frame[] = [{ robot: 0, bytes: encodeBatch(1, 1) }, { robot: 1, bytes: EDGE_FRAMES[name]! }, { robot: 2, bytes: encodeBatch(2, 1) }];
    expectSame(taskOf(frames, [1, 1, 1, 1]), name);
  });

  it(`fuzzed and corrupt frames (${FUZZ_TASKS} tasks, fixed seed)`, () => {
    const rand = prng(20261125);
    let rejected = 0;
    let accepted = 0;
    for (let t = 0; t < FUZZ_TASKS; t++) {
      const frames: Frame[] = [];
      const n = 1 + Math.floor(rand() * 6);
      for (let i = 0; i < n; i++) {
        const samples = Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, k) => randomSample(rand, 1_700_000_000_000 + t * 100 + k * 7 - Math.floor(rand() * 50)));
        let bytes = batchOf(samples);
        // A third of the batches carry seq/epoch (issue 14), before the samples as the agent writes them.
        if (rand() < 0.33) {
          const head = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { seq: BigInt(1 + Math.floor(rand() * 2 ** 40)), epoch: BigInt(Math.floor(rand() * 2 ** 48)) }));
          bytes = Uint8Array.from([...head, ...bytes]);
        }
        const r = rand();
        if (r < 0.45) bytes = mutate(rand, bytes);
        else if (r < 0.5) bytes = Uint8Array.from({ length: Math.floor(rand() * 40) }, () => Math.floor(rand() * 256));
        frames.push({ robot: Math.floor(rand() * ROBOTS.length), bytes });
      }
      const task = taskOf(frames, rand() < 0.5 ? [1, 0, 1, 1] : null, 1_700_000_000_000 + t);
      const res = expectSame(task, `fuzz task ${t}`);
      rejected += res.corruptFrames;
      accepted += res.frames - res.corruptFrames;
    }
    // The fuzz must exercise both outcomes to mean anything.
    expect(rejected).toBeGreaterThan(FUZZ_TASKS / 10);
    expect(accepted).toBeGreaterThan(FUZZ_TASKS);
  });

  it('bad task layout (header past the end, robot index out of range) is reported the same way', () => {
    const good = taskOf([{ robot: 0, bytes: encodeBatch(1, 2) }, { robot: 1, bytes: encodeBatch(2, 2) }], null);
    expectSame({ ...good, frameCount: good.frameCount + 1 }, 'header past end');
    const bad = copyTask(good);
    new DataView(bad.frames as ArrayBuffer).setUint32(0, 99, true);
    expectSame(bad, 'robot index out of range');
    const long = copyTask(good);
    new DataView(long.frames as ArrayBuffer).setUint32(4, 1_000_000, true);
    expectSame(long, 'length past end');
  });

  it('reads frames from shared memory and writes rows into a slot when they fit, into a new buffer when not, with the same bytes', () => {
    const base = taskOf([{ robot: 0, bytes: encodeBatch(1, 50) }, { robot: 1, bytes: encodeBatch(2, 50) }], [1, 0, 0, 0]);
    const other = taskOf([{ robot: 1, bytes: encodeBatch(9, 80) }, { robot: 0, bytes: encodeBatch(8, 80) }], null);
    for (const k of kinds) {
      const want = comparable(decoderOf(k).decode(copyTask(base), 0));
      // A task slot (task-slots.ts): frames and rows in SharedArrayBuffers, rows at the slot's start.
      const sharedFrames = new SharedArrayBuffer(base.byteLength + 100);
      new Uint8Array(sharedFrames).set(new Uint8Array(base.frames as ArrayBuffer, 0, base.byteLength));
      const rowsSlot = new Uint8Array(new SharedArrayBuffer(1 << 20));
      const inSlot = decoderOf(k).decode({ ...copyTask(base), frames: sharedFrames, rowsInto: rowsSlot }, 0);
      expect(inSlot.rows.buffer, k).toBe(rowsSlot.buffer);
      expect(inSlot.rows.byteOffset, k).toBe(0);
      expect(comparable({ ...inSlot, rows: inSlot.rows.slice() }), k).toEqual(want);
      const small = new Uint8Array(new SharedArrayBuffer(16));
      const fresh = decoderOf(k).decode({ ...copyTask(base), frames: sharedFrames, rowsInto: small }, 0);
      expect(fresh.rows.buffer, k).not.toBe(small.buffer);
      expect(fresh.rows.buffer instanceof ArrayBuffer, k).toBe(true);
      expect(comparable(fresh), k).toEqual(want);
      // Past the destination's end half way through: what was written there moves with the rest
      // (after another task, so a decoder's reused buffer holds other bytes).
      decoderOf(k).decode(copyTask(other), 0);
      const half = new Uint8Array(new SharedArrayBuffer(Math.floor((want as { rows: string }).rows.length / 4))); // hex: 2 chars a byte
      const moved = decoderOf(k).decode({ ...copyTask(base), frames: sharedFrames, rowsInto: half }, 0);
      expect(moved.rows.buffer, k).not.toBe(half.buffer);
      expect(comparable(moved), k).toEqual(want);
      // A corrupt frame whose rows crossed the destination's end: rolled back to the good frame's rows.
      const bad = taskOf([{ robot: 0, bytes: encodeBatch(1, 50) }, { robot: 1, bytes: Uint8Array.from([...encodeBatch(2, 50), 0x0a, 0x7f]) }], null);
      const wantBad = comparable(decoderOf(k).decode(copyTask(bad), 0)) as { rows: string; corruptFrames: number };
      expect(wantBad.corruptFrames, k).toBe(1);
      decoderOf(k).decode(copyTask(other), 0);
      const goodBytes = wantBad.rows.length / 2;
      const straddle = new Uint8Array(new SharedArrayBuffer(goodBytes + Math.floor(goodBytes / 2)));
      expect(comparable(decoderOf(k).decode({ ...copyTask(bad), rowsInto: straddle }, 0)), k).toEqual(wantBad);
    }
  });

  it('rows that outgrow the destination never write past its end', () => {
    // Each row is written with one bounds check for the row's largest size (telemetry_decoder.cc,
    // maxRowBytes): a destination ending anywhere inside the rows must keep the bytes after it.
    const task = taskOf([{ robot: 0, bytes: encodeBatch(1, 3) }, { robot: 1, bytes: batchOf(edgeSamples().slice(0, 3)) }], null);
    for (const k of kinds) {
      const want = comparable(decoderOf(k).decode(copyTask(task), 0)) as { rows: string };
      const total = want.rows.length / 2;
      for (let len = 0; len <= total; len++) {
        const buf = new Uint8Array(len + 256).fill(0xab);
        const got = comparable(decoderOf(k).decode({ ...copyTask(task), rowsInto: buf.subarray(0, len) }, 0));
        expect(got, `${k} into ${len} bytes`).toEqual(want);
        expect(buf.subarray(len).every((b) => b === 0xab), `${k}: bytes after a ${len}-byte destination`).toBe(true);
      }
    }
  });

  it('sparse samples outgrowing the destination task after task (rows 20x their frames)', () => {
    // A robot sending only timestamps: each ~9-byte sample is a ~220-byte row, so every task outgrows
    // a region sized from its frames. The addon once doubled its own buffer on each such task and
    // aborted the process within a few dozen tasks (std::bad_alloc).
    const sparse = Array.from({ length: 200 }, (_, i) => create(TelemetrySampleSchema, { tsMs: BigInt(1_700_000_000_000 + i) }));
    const task = taskOf([{ robot: 0, bytes: batchOf(sparse) }, { robot: 1, bytes: batchOf(sparse.slice(0, 50)) }], null);
    for (const k of kinds) {
      const want = comparable(decoderOf(k).decode(copyTask(task), 0));
      for (let i = 0; i < 300; i++) {
        const region = new Uint8Array(task.byteLength * 2);
        expect(comparable(decoderOf(k).decode({ ...copyTask(task), rowsInto: region }, 0)), `${k}, task ${i}`).toEqual(want);
      }
    }
  });

  it.skipIf(fallbackRun)('a batch of near-empty samples does not leave the addon holding its rows (at most 16 MiB kept)', () => {
    // 1 MiB of frames of empty samples (2 bytes each) is ~100 MiB of rows: they go out in a buffer of
    // their own, and the thread keeps at most 16 MiB of its buffer for the next task.
    const binding = loadNative().binding!;
    const empty = batchOf(Array.from({ length: 120_000 }, () => create(TelemetrySampleSchema, {})));
    const task = taskOf([{ robot: 0, bytes: empty }, { robot: 1, bytes: empty }, { robot: 2, bytes: empty }, { robot: 3, bytes: empty }], null);
    const r = decoderOf('native').decode({ ...copyTask(task), rowsInto: new Uint8Array(task.byteLength * 3) }, 0);
    expect(r.rowCount).toBe(480_000);
    expect(r.rows.byteLength).toBeGreaterThan(64 << 20);
    expect(binding.retainedBytes()).toBeLessThanOrEqual(16 << 20);
  });

  it.skipIf(fallbackRun)('the addon spells numbers as JavaScript does', () => {
    const binding = loadNative().binding!;
    const rand = prng(7);
    const values = [0, -0, 1, -1, 0.1, 1e21, 1e20, 123e-7, 1e-7, 1.5e-7, 1e-6, 5e-324, 1.7976931348623157e308, 2 ** 53, 2 ** 53 + 2, 100, 1e100, 4.35, 0.000001];
    for (let i = 0; i < 20_000; i++) {
      const bits = new DataView(new ArrayBuffer(8));
      bits.setUint32(0, Math.floor(rand() * 2 ** 32));
      bits.setUint32(4, Math.floor(rand() * 2 ** 32));
      values.push(bits.getFloat64(0), Math.fround(rand() * 10 ** Math.floor(rand() * 20 - 10)), (rand() - 0.5) * 10 ** Math.floor(rand() * 60 - 30));
    }
    for (const v of values) if (Number.isFinite(v)) expect(binding.formatNumber(v), String(v)).toBe(String(v));
  });
});
