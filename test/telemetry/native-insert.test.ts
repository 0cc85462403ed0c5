/**
 * Native inserts (native-insert.ts, native-bridge/src/native_block.cc): the addon's conversion of
 * RowBinary rows against a plain reference written here from the field table, against the ClickHouse
 * server's own Native output for the same rows (byte for byte), and through the store end to end.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { HealthLevel, TelemetryBatchSchema, TelemetrySampleSchema, type TelemetrySample } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { INSERT_COLUMN_LIST, INSERT_COLUMNS, ROWBINARY_TYPES } from '../../src/telemetry/store/columns.js';
import { openClickHouseStore, type ClickHouseSampleStore } from '../../src/telemetry/store/clickhouse-store.js';
import { decoderOf } from '../../src/telemetry/decode/select.js';
import { DECODER_ENV, loadNative } from '../../src/telemetry/decode/native.js';
import { FramePacker } from '../../src/telemetry/decode/frame-packer.js';
import { existsSync, readFileSync } from 'node:fs';
import { chooseInsertFormat, INSERT_FORMAT_ENV, NativeInsert, nativeColumns, sortKeyColumns, type NativeBody } from '../../src/telemetry/store/native-insert.js';
import { setHugePages } from '../../src/telemetry/store/large-buffer.js';
import { parseConfig } from '../../src/config.js';
import { SAMPLE_FIELDS } from '../../src/telemetry/sample/sample-table.js';
import { prng } from '../support/prng.js';
import { gc, hugePageAdvisedMappings } from '../support/smaps.js';

const fallbackRun = process.env[DECODER_ENV] === 'js';
const binding = loadNative().binding;
const url = inject('clickhouseUrl');
const skipReason = inject('clickhouseSkipReason');

/** Samples with strings of every varint length (1-3 bytes), empty and multi-element fault lists. */
function samples(n: number, seed: number): TelemetrySample[] {
  const rand = prng(seed);
  const text = (max: number): string => {
    const len = Math.floor(rand() * max);
    let s = '';
    for (let i = 0; i < len; i++) s += 'aé✓\n"'[Math.floor(rand() * 5)];
    return s;
  };
  return Array.from({ length: n }, (_, i) => create(TelemetrySampleSchema, {
    tsMs: BigInt(1_700_000_000_000 + i),
    position: { latitude: rand() * 90, longitude: -rand() * 180, elevationM: i },
    pose: { xM: rand(), yM: -rand(), zM: 0, headingDeg: rand() * 360 },
    velocity: { linearMps: rand(), angularDps: -rand() },
    battery: { percent: 50 + i % 50, voltageV: 48.5, charging: i % 2 === 0 },
    mode: i % 97 === 0 ? text(20_000) : text(i % 7 === 0 ? 300 : 12),
    estop: i % 3 === 0,
    mission: i % 4 === 0 ? undefined : { runId: `run-${i}`, missionState: text(10), progressPct: 1.5, stepIndex: -i, remainingDistanceM: rand(), etaS: 9 },
    health: { level: [HealthLevel.OK, HealthLevel.WARN, HealthLevel.ERROR][i % 3]!, faults: Array.from({ length: i % 4 }, () => text(i % 11 === 0 ? 200 : 6)), cpuTempC: 40 },
    gpsFix: i % 5,
  }));
}

/**
 * RowBinary rows of `count` samples from the reference decoder: batches of 25 samples over five
 * robots in two fleets (one robot id a prefix of another, one in both fleets, one non-ASCII), every
 * seventh batch with its samples going back in time.
 */
function rowsOf(count: number, seed: number): { rows: Uint8Array; rowCount: number; ends: number[] } {
  const packer = new FramePacker(64);
  const all = samples(count, seed);
  const robots = [['robot-a', 'fleet-1'], ['rob\tot "b"', 'fleet-1'], ['ロボット-c', 'fleet-1'], ['robot-ab', 'fleet-1'], ['robot-a', 'fleet-0']] as const;
  for (let i = 0; i < all.length; i += 25) {
    const part = all.slice(i, i + 25);
    if ((i / 25) % 7 === 6) part.reverse();
    const batch = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples: part }));
    const [robot, fleet] = robots[(i / 25) % robots.length]!;
    packer.add(robot, fleet, batch, 1_700_000_000_500 + i);
  }
  const r = decoderOf('reference').decode({ ...packer.take(), live: null }, 0);
  return { rows: new Uint8Array(r.rows), rowCount: r.rowCount, ends: rowEnds(new Uint8Array(r.rows)) };
}

function readVarUInt(b: Uint8Array, p: { at: number }): number {
  let v = 0;
  for (let shift = 0; ; shift += 7) {
    const x = b[p.at++]!;
    v += (x & 0x7f) * 2 ** shift;
    if ((x & 0x80) === 0) return v;
  }
}

/** Past one varint-prefixed string. */
function skip(b: Uint8Array, p: { at: number }): void {
  const len = readVarUInt(b, p);
  p.at += len;
}

const WIDTH: Record<string, number> = { Int64: 8, Float64: 8, Float32: 4, UInt8: 1, Int32: 4, Enum8: 1 };

/** The byte offset where each row ends. */
function rowEnds(rows: Uint8Array): number[] {
  const ends: number[] = [];
  const p = { at: 0 };
  while (p.at < rows.length) {
    for (const f of SAMPLE_FIELDS) {
      if (f.rowType === 'String') skip(rows, p);
      else if (f.rowType === 'Array(String)') for (let n = readVarUInt(rows, p); n > 0; n--) skip(rows, p);
      else p.at += WIDTH[f.rowType]!;
    }
    ends.push(p.at);
  }
  return ends;
}

/** The rows ordered as the table's key orders them: fleet id, robot id (bytes), ts_ms; stable. */
function keyOrdered(rows: Uint8Array, ends: number[]): Uint8Array {
  const list = ends.map((end, i) => {
    const start = i === 0 ? 0 : ends[i - 1]!;
    const p = { at: start };
    const robotLen = readVarUInt(rows, p);
    const robot = Buffer.from(rows.subarray(p.at, p.at + robotLen));
    p.at += robotLen;
    const fleetLen = readVarUInt(rows, p);
    const fleet = Buffer.from(rows.subarray(p.at, p.at + fleetLen));
    p.at += fleetLen;
    const ts = Buffer.from(rows.subarray(p.at, p.at + 8)).readBigInt64LE();
    return { row: rows.subarray(start, end), robot, fleet, ts };
  });
  list.sort((a, b) => Buffer.compare(a.fleet, b.fleet) || Buffer.compare(a.robot, b.robot) || (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  return Buffer.concat(list.map((r) => r.row));
}

/** Reference: ClickHouse's Native block layout written value by value from the field table. */
function referenceNative(rows: Uint8Array, rowCount: number): Buffer {
  const varUInt = (n: number): number[] => {
    const o: number[] = [];
    while (n >= 0x80) { o.push((n & 0x7f) | 0x80); n = Math.floor(n / 128); }
    o.push(n);
    return o;
  };
  const str = (s: string): Buffer => Buffer.concat([Buffer.from(varUInt(Buffer.byteLength(s))), Buffer.from(s)]);
  const cols: Buffer[][] = SAMPLE_FIELDS.map(() => []);
  const offsets: bigint[][] = SAMPLE_FIELDS.map(() => []);
  const p = { at: 0 };
  while (p.at < rows.length) {
    SAMPLE_FIELDS.forEach((f, c) => {
      const start = p.at;
      if (f.rowType === 'String') {
        skip(rows, p);
        cols[c]!.push(Buffer.from(rows.subarray(start, p.at)));
      } else if (f.rowType === 'Array(String)') {
        const n = readVarUInt(rows, p);
        const prev = offsets[c]!.at(-1) ?? 0n;
        offsets[c]!.push(prev + BigInt(n));
        const s = p.at;
        for (let k = 0; k < n; k++) skip(rows, p);
        cols[c]!.push(Buffer.from(rows.subarray(s, p.at)));
      } else {
        p.at += WIDTH[f.rowType]!;
        cols[c]!.push(Buffer.from(rows.subarray(start, p.at)));
      }
    });
  }
  const parts: Buffer[] = [Buffer.from(varUInt(SAMPLE_FIELDS.length)), Buffer.from(varUInt(rowCount))];
  SAMPLE_FIELDS.forEach((f, c) => {
    parts.push(str(f.column), str(ROWBINARY_TYPES[f.column]!));
    if (f.rowType === 'Array(String)') {
      const o = Buffer.alloc(8 * offsets[c]!.length);
      offsets[c]!.forEach((v, i) => o.writeBigUInt64LE(v, i * 8));
      parts.push(o);
    }
    parts.push(...cols[c]!);
  });
  return Buffer.concat(parts);
}

/** `rows` cut at row boundaries into `pieces` chunks. */
function chunked(rows: Uint8Array, ends: number[], pieces: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (let k = 1; k <= pieces; k++) {
    const end = k === pieces ? rows.length : ends[Math.floor((ends.length * k) / pieces) - 1]!;
    out.push(rows.subarray(start, end));
    start = end;
  }
  return out;
}

describe('insert format choice', () => {
  it('is Native on legacy servers with the addon, RowBinary on modern ones unless forced, and never without the addon', () => {
    const b = {} as never;
    expect(chooseInsertFormat('auto', 'legacy', b).format).toBe('native');
    expect(chooseInsertFormat('auto', 'modern', b).format).toBe('rowbinary');
    expect(chooseInsertFormat('native', 'modern', b).format).toBe('native');
    expect(chooseInsertFormat('rowbinary', 'legacy', b).format).toBe('rowbinary');
    expect(chooseInsertFormat('native', 'legacy', null)).toEqual({ format: 'rowbinary', reason: 'the telemetry addon is not loaded' });
    expect(parseConfig({}).clickhouseInsertFormat).toBe('auto');
    expect(parseConfig({ [INSERT_FORMAT_ENV]: 'native' }).clickhouseInsertFormat).toBe('native');
    expect(() => parseConfig({ [INSERT_FORMAT_ENV]: 'tsv' })).toThrow(`${INSERT_FORMAT_ENV} must be one of: auto, native, rowbinary, got 'tsv'`);
  });

  it('sorts by the key both DDL files give the table', () => {
    for (const flavor of ['legacy', 'modern']) {
      const ddl = readFileSync(new URL(`../../telemetry/schema/samples.${flavor}.sql`, import.meta.url), 'utf8');
      expect(ddl, flavor).toMatch(/^ORDER BY \(fleet_id, robot_id, ts\)$/m);
    }
    expect([...sortKeyColumns()].map((i) => SAMPLE_FIELDS[i]!.column)).toEqual(['fleet_id', 'robot_id', 'ts_ms']);
  });
});

/** The converted block, failing the test with the addon's reason when it refused. */
function ok(r: NativeBody | { error: string }): NativeBody {
  if ('error' in r) throw new Error(`refused: ${r.error}`);
  return r;
}

describe.skipIf(fallbackRun)('the addon\'s Native conversion', () => {
  it('equals the reference for rows in one chunk or many, strings of 1-3 byte lengths and arrays of 0-3 elements, in the key\'s order or as they came', async () => {
    const sorting = new NativeInsert(binding!);
    const asCame = new NativeInsert(binding!, 2, false);
    for (const [count, seed] of [[1, 1], [300, 2], [2_000, 3]] as const) {
      const { rows, rowCount, ends } = rowsOf(count, seed);
      const want = { sorted: referenceNative(keyOrdered(rows, ends), rowCount), asCame: referenceNative(rows, rowCount) };
      if (count > 1) expect(want.sorted.equals(want.asCame)).toBe(false);
      for (const pieces of [1, 3, 17].filter((n) => n <= rowCount)) {
        // An empty chunk (a batch without rows) among them changes nothing.
        const chunks = [new Uint8Array(0), ...chunked(rows, ends, pieces)];
        for (const [conv, expected, label] of [[sorting, want.sorted, 'sorted'], [asCame, want.asCame, 'as they came']] as const) {
          const block = ok(await conv.convert(chunks, rows.length, rowCount));
          expect(Buffer.from(block.body).equals(expected), `${count} rows in ${pieces} chunks, ${label}`).toBe(true);
          block.release();
        }
      }
    }
    expect(sorting.stats()).toMatchObject({ blocks: 7, fallbacks: 0 });
    expect(sorting.stats().cpuS).toBeGreaterThan(0);
  });

  it('keeps the arrival order of a robot\'s samples with the same ts_ms when it sorts one that went back in time', async () => {
    // Samples 0..3 of one robot at ts 5, 3, 3, 3 (told apart by their step index): 3, 3, 3 keep their order, then 5.
    const packer = new FramePacker(64);
    const at = (ts: number, i: number): TelemetrySample => create(TelemetrySampleSchema, { tsMs: BigInt(ts), mission: { stepIndex: i } });
    packer.add('r', 'f', toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples: [at(5, 0), at(3, 1), at(3, 2), at(3, 3)] })), 1);
    const r = decoderOf('reference').decode({ ...packer.take(), live: null }, 0);
    const rows = new Uint8Array(r.rows);
    const ends = rowEnds(rows);
    const block = ok(await new NativeInsert(binding!).convert([rows], rows.length, r.rowCount));
    const byEnd = (i: number): Uint8Array => rows.subarray(i === 0 ? 0 : ends[i - 1]!, ends[i]);
    expect(Buffer.from(block.body).equals(referenceNative(Buffer.concat([1, 2, 3, 0].map(byEnd)), 4))).toBe(true);
  });

  it('refuses a row cut at a chunk end, a wrong row count, a short buffer, shared memory and bad arguments', async () => {
    const { rows, rowCount, ends } = rowsOf(40, 4);
    const cols = nativeColumns();
    const cut = ends[9]! + 3;
    const out = (): Uint8Array => new Uint8Array(rows.length * 2);
    await expect(binding!.rowBinaryToNative([rows.subarray(0, cut), rows.subarray(cut)], rowCount, cols.kinds, cols.headers, cols.headerOffsets, out()))
      .rejects.toThrow(/row 10 is cut short or malformed at column \d+ \(chunk 0\)/);
    await expect(binding!.rowBinaryToNative([rows], rowCount + 1, cols.kinds, cols.headers, cols.headerOffsets, out()))
      .rejects.toThrow(`the chunks hold ${rowCount} rows, not ${rowCount + 1}`);
    // A row count far beyond what the bytes can hold is refused the same way (nothing sized by it).
    await expect(binding!.rowBinaryToNative([rows], 2 ** 52, cols.kinds, cols.headers, cols.headerOffsets, out(), sortKeyColumns()))
      .rejects.toThrow(`the chunks hold ${rowCount} rows, not ${2 ** 52}`);
    await expect(binding!.rowBinaryToNative([rows], rowCount, cols.kinds, cols.headers, cols.headerOffsets, new Uint8Array(100)))
      .rejects.toThrow(/out holds 100 bytes, the block needs \d+/);
    expect(() => binding!.rowBinaryToNative([rows], rowCount, cols.kinds, cols.headers, new Uint32Array(3), out()))
      .toThrow('headerOffsets must be a Uint32Array of kinds.length + 1');
    expect(() => binding!.rowBinaryToNative([rows], rowCount, new Uint8Array(0), cols.headers, new Uint32Array(1), out()))
      .toThrow('kinds is empty');
    const shared = new Uint8Array(new SharedArrayBuffer(rows.length));
    shared.set(rows);
    expect(() => binding!.rowBinaryToNative([shared], rowCount, cols.kinds, cols.headers, cols.headerOffsets, out()))
      .toThrow('chunks must be Uint8Arrays over ArrayBuffers');
    // The key's columns must be two adjacent strings and an 8-byte value (fleet_id, robot_id, ts_ms).
    for (const bad of [Int32Array.from([0, 1, 4]).subarray(0, 2), Int32Array.from([2, 1, 2]), Int32Array.from([1, 0, 99]), Int32Array.from([0, 16, 2])]) {
      expect(() => binding!.rowBinaryToNative([rows], rowCount, cols.kinds, cols.headers, cols.headerOffsets, out(), bad))
        .toThrow('sortKey must be an Int32Array of [String column, the String column next to it, 8-byte column]');
    }

    const conv = new NativeInsert(binding!);
    expect(await conv.convert([rows.subarray(0, cut), rows.subarray(cut)], rows.length, rowCount)).toEqual({ error: expect.stringMatching(/row 10 is cut short/) });
    expect(conv.stats()).toMatchObject({ blocks: 0, fallbacks: 1 });
  });

  it('converts one block at a time into shared memory, reuses its buffers, keeps at most maxSpare, and gives a dropped one\'s pages back', async () => {
    // The real addon, with its conversions and page releases counted.
    let running = 0;
    let mostAtOnce = 0;
    let released = 0;
    const counted = {
      ...binding!,
      rowBinaryToNative: async (...args: Parameters<NonNullable<typeof binding>['rowBinaryToNative']>): Promise<number> => {
        mostAtOnce = Math.max(mostAtOnce, ++running);
        try {
          return await binding!.rowBinaryToNative(...args);
        } finally {
          running--;
        }
      },
      releasePages: (b: Uint8Array): number => {
        released++;
        return binding!.releasePages(b);
      },
    };
    const conv = new NativeInsert(counted, 2);
    const { rows, rowCount } = rowsOf(50, 5);
    // Asked together: both converted, one after the other, each into its own buffer.
    const [a, b] = (await Promise.all([conv.convert([rows], rows.length, rowCount), conv.convert([rows], rows.length, rowCount)])).map(ok);
    expect(mostAtOnce).toBe(1);
    expect(a!.body.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(a!.body.buffer).not.toBe(b!.body.buffer);
    expect(Buffer.from(a!.body).equals(Buffer.from(b!.body))).toBe(true);
    a!.release();
    a!.release(); // twice is harmless
    b!.release();
    const c = ok(await conv.convert([rows], rows.length, rowCount));
    expect([a!.body.buffer, b!.body.buffer]).toContain(c.body.buffer);
    c.release();
    expect(conv.stats().bufferBytes).toBe(2 * 4 * 1024 * 1024);
    // Two 40 MiB blocks (one after the other: the second reuses the first's buffer) leave a 64 MiB
    // buffer (a power of two) next to a small one; the next small block drops the large one.
    const big = new Uint8Array(40 * 1024 * 1024);
    const [x, y] = await Promise.all([conv.convert([big], big.length, 0), conv.convert([big], big.length, 0)]); // zeros are not 0 rows
    expect([x, y].every((r) => 'error' in r)).toBe(true);
    expect(conv.stats().bufferBytes).toBe(68 * 1024 * 1024);
    expect(released).toBe(1); // a 4 MiB spare made room for the 64 MiB one
    const d = ok(await conv.convert([rows], rows.length, rowCount));
    expect(d.body.buffer.byteLength).toBe(4 * 1024 * 1024);
    d.release();
    expect(conv.stats().bufferBytes).toBe(4 * 1024 * 1024);
    expect(released).toBe(2); // the 64 MiB one
    // A third buffer given back when two (as large) are kept: it goes, pages released.
    const [e, f, g] = (await Promise.all([1, 2, 3].map(() => conv.convert([rows], rows.length, rowCount)))).map(ok);
    [e, f, g].forEach((x) => x!.release());
    expect(conv.stats().bufferBytes).toBe(2 * 4 * 1024 * 1024);
    expect(released).toBe(3);
  });

  it.skipIf(!existsSync('/sys/kernel/mm/transparent_hugepage/enabled'))('advises huge pages for its buffers of 32 MiB and more, never for smaller ones or with FLEETGW_HUGE_PAGES=off', async () => {
    const advised = (minMiB: number, maxMiB: number): Set<string> => hugePageAdvisedMappings(minMiB * 1024, maxMiB * 1024);
    const added = (before: Set<string>, after: Set<string>): string[] => [...after].filter((a) => !before.has(a));
    // Buffers an earlier test dropped go now, so none is unmapped (and its address reused) mid-test.
    gc();
    const { rows, rowCount } = rowsOf(50, 6);
    const conv = new NativeInsert(binding!, 3);
    /** Converts a block that needs a fresh buffer of `mib` MiB (zeros: the addon refuses them, the buffer stays a spare). */
    const fresh = async (into: NativeInsert, mib: number): Promise<void> => {
      const block = new Uint8Array((mib / 2 + 1) * 1024 * 1024);
      expect('error' in await into.convert([block], block.length, 0)).toBe(true);
    };
    // A small block's 4 MiB buffer and a 16 MiB one: glibc's heap may serve them, so they are left alone.
    let before = advised(1, 16);
    ok(await conv.convert([rows], rows.length, rowCount)).release();
    await fresh(conv, 16);
    expect(conv.stats().bufferBytes).toBe(20 * 1024 * 1024);
    expect(added(before, advised(1, 16))).toEqual([]);
    // 32 MiB, the least advised, and 64 MiB: their whole 2 MiB blocks are advised, one mapping each.
    before = advised(30, 32);
    await fresh(conv, 32);
    expect(added(before, advised(30, 32))).toHaveLength(1);
    before = advised(62, 64);
    await fresh(conv, 64);
    expect(conv.stats().bufferBytes).toBe(112 * 1024 * 1024); // the 4 MiB one went for it (maxSpare 3)
    expect(added(before, advised(62, 64))).toHaveLength(1);
    // Switched off: the same buffer, not advised.
    setHugePages('off');
    try {
      const off = new NativeInsert(binding!, 3);
      before = advised(62, 64);
      await fresh(off, 64);
      expect(off.stats().bufferBytes).toBe(64 * 1024 * 1024);
      expect(added(before, advised(62, 64))).toEqual([]);
    } finally {
      setHugePages('on');
    }
  });

  it('releasePages gives a buffer\'s whole pages back (they read as zeros) and leaves the partial ones', () => {
    const b = new Uint8Array(new SharedArrayBuffer(64 * 4096)).subarray(100, 100 + 10 * 4096);
    b.fill(7);
    const n = binding!.releasePages(b);
    expect(n).toBeGreaterThanOrEqual(8 * 4096);
    expect(n % 4096).toBe(0);
    expect(b[0]).toBe(7); // in a page shared with bytes before the view
    expect(b.at(-1)).toBe(7);
    expect(b.filter((x) => x === 0).length).toBe(n);
    expect(() => binding!.releasePages(new Uint32Array(4) as unknown as Uint8Array)).toThrow('releasePages(buffer: Uint8Array)');
  });
});

describe.skipIf(url === null || fallbackRun)(`Native inserts into a ClickHouse server${url === null ? ` (skipped: ${skipReason})` : ''}`, () => {
  const database = `fleetgw_native_${process.pid}_${Date.now()}`;
  let store: ClickHouseSampleStore;
  const warnings: string[] = [];
  const q = async (sql: string, body?: Uint8Array): Promise<Buffer> => {
    const res = await fetch(`${url}/?database=${database}&query=${encodeURIComponent(sql)}`, { method: 'POST', ...(body ? { body } : {}) });
    const b = Buffer.from(await res.arrayBuffer());
    if (!res.ok) throw new Error(`${sql}: ${b.toString()}`);
    return b;
  };

  beforeAll(async () => {
    await fetch(`${url}/`, { method: 'POST', body: `CREATE DATABASE IF NOT EXISTS ${database}` });
    store = await openClickHouseStore({ url: url!, database, warn: (m) => warnings.push(m) });
  });

  afterAll(async () => {
    await store?.close();
    await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
  });

  it('writes exactly the bytes the server itself writes for the same rows (FORMAT Native), and sorts them by the key', async () => {
    // TinyLog keeps the insert order, so the server's own Native output lists the rows as sent.
    const { rows, rowCount, ends } = rowsOf(3_000, 6);
    const structure = INSERT_COLUMNS.map((c) => `${c} ${ROWBINARY_TYPES[c]}`).join(', ');
    await q(`CREATE TABLE ordered (${structure}) ENGINE = TinyLog`);
    await q(`INSERT INTO ordered ${INSERT_COLUMN_LIST} FORMAT RowBinary`, rows);
    const server = await q(`SELECT ${INSERT_COLUMNS.join(', ')} FROM ordered FORMAT Native`);
    const asCame = ok(await new NativeInsert(binding!, 2, false).convert(chunked(rows, ends, 5), rows.length, rowCount));
    expect(Buffer.from(asCame.body).equals(server)).toBe(true);
    // Sorted: the server reads back the rows in the key's order.
    const sorted = ok(await new NativeInsert(binding!).convert(chunked(rows, ends, 5), rows.length, rowCount));
    await q(`CREATE TABLE sorted (${structure}) ENGINE = TinyLog`);
    // A copy: fetch refuses a view of shared memory (the store's HTTP client writes it as it is).
    await q(`INSERT INTO sorted ${INSERT_COLUMN_LIST} FORMAT Native`, Uint8Array.from(sorted.body));
    const back = await q(`SELECT ${INSERT_COLUMNS.join(', ')} FROM sorted FORMAT RowBinary`);
    expect(back.equals(keyOrdered(rows, ends))).toBe(true);
  });

  it('lands the same rows through the store as a RowBinary insert does', async () => {
    expect(store.insertFormat?.format).toBe('native');
    expect(store.insertFormat?.reason).toMatch(/^legacy server/);
    const { rows, rowCount, ends } = rowsOf(2_000, 7);
    await store.insert(chunked(rows, ends, 4), rows.length, rowCount);
    expect(store.nativeStats()).toMatchObject({ blocks: 1, fallbacks: 0 });
    await q(`CREATE TABLE via_rowbinary AS telemetry_samples`);
    await q(`INSERT INTO via_rowbinary ${INSERT_COLUMN_LIST} FORMAT RowBinary`, rows);
    const dump = async (t: string): Promise<string[]> => (await q(`SELECT * FROM ${t} FORMAT TabSeparated`)).toString().trim().split('\n').sort();
    const [a, b] = await Promise.all([dump('telemetry_samples'), dump('via_rowbinary')]);
    expect(a.length).toBe(rowCount);
    expect(a).toEqual(b);
  });

  it('sends a block the addon refuses as RowBinary, says so, and loses none of its rows', async () => {
    await q('TRUNCATE TABLE telemetry_samples');
    const { rows, rowCount } = rowsOf(100, 8);
    // A row count that does not match the rows: the addon refuses the block.
    await store.insert([rows], rows.length, rowCount + 1);
    expect(store.nativeStats()).toMatchObject({ blocks: 1, fallbacks: 1 });
    expect(warnings).toEqual([expect.stringMatching(/^telemetry insert sent as RowBinary: the Native conversion refused 1 block\(s\) since the last such line \(last: rowBinaryToNative: the chunks hold 100 rows, not 101\)$/)]);
    expect((await q('SELECT count() FROM telemetry_samples')).toString().trim()).toBe(String(rowCount));
    // A block of no rows (durable points only) is not converted.
    await store.insert([], 0, 0);
    expect(store.nativeStats()).toMatchObject({ blocks: 1, fallbacks: 1 });
    // Within the minute a refusal is counted, not said; the count is said at close.
    const said: string[] = [];
    const other = await openClickHouseStore({ url: url!, database, warn: (m) => said.push(m) });
    await other.insert([rows], rows.length, rowCount + 1);
    await other.insert([rows], rows.length, rowCount + 2);
    expect(said).toHaveLength(1);
    await other.close();
    expect(said[1]).toMatch(/refused 1 block\(s\) since the last such line \(last: rowBinaryToNative: the chunks hold 100 rows, not 102\)$/);
  });
});
