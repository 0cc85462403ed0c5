/**
 * The MCAP export's byte cap (src/fleet/history/telemetry/mcap.ts) falls between timestamps: an export continued
 * from `next_from_ms` never rewrites what the previous file holds, so following the continuations
 * always ends, even when one timestamp holds more than the cap (its first samples are written, the
 * rest counted as skipped, and the continuation starts after it).
 */
import { McapIndexedReader, type TypedMcapRecords } from '@mcap/core';
import { describe, expect, it } from 'vitest';
import { tunablesFromEnv } from '../../src/config.js';
import { writeMcap } from '../../src/fleet/history/telemetry/mcap.js';
import type { HistorySample } from '../../src/fleet/history/telemetry/samples.js';

async function exportOf(samples: readonly HistorySample[], fromMs: number, toMs: number, maxBytes: number): Promise<{ ts: number[]; result: Map<string, string> }> {
  const parts: Uint8Array[] = [];
  const inRange = samples.filter((s) => (s.tsMs as number) >= fromMs && (s.tsMs as number) < toMs);
  const pages: AsyncIterable<readonly HistorySample[]> = {
    [Symbol.asyncIterator]: () => {
      let done = false;
      return { next: () => Promise.resolve(done ? { done: true, value: undefined } : ((done = true), { done: false, value: inRange })) };
    },
  };
  const sink = {
    write: (c: Uint8Array): Promise<void> => {
      parts.push(c.slice());
      return Promise.resolve();
    },
  };
  await writeMcap('r1', { fromMs, toMs }, pages, sink, maxBytes);
  const bytes = Buffer.concat(parts);
  const reader = await McapIndexedReader.Initialize({
    readable: { size: () => Promise.resolve(BigInt(bytes.byteLength)), read: (o, n) => Promise.resolve(bytes.subarray(Number(o), Number(o + n))) },
  });
  const topics = new Map([...reader.channelsById.values()].map((c) => [c.id, c.topic]));
  const ts: number[] = [];
  for await (const m of reader.readMessages()) if (topics.get(m.channelId) === '/telemetry') ts.push(Number(m.logTime / 1_000_000n));
  const results: TypedMcapRecords['Metadata'][] = [];
  for await (const md of reader.readMetadata({ name: 'fleetgw.export.result' })) results.push(md);
  expect(results).toHaveLength(1);
  return { ts, result: results[0]!.metadata };
}

const sample = (tsMs: number, i: number): HistorySample => ({ tsMs, robotId: 'r1', mode: `m${i}`.padEnd(200, 'x') });

describe('MCAP export cap', () => {
  it('cuts between timestamps, and continuations move on even when one timestamp exceeds the cap', async () => {
    // 10 samples at t=1000 (more than the cap on their own), then 3 at t=1001 and 3 at t=1002.
    const samples = [
      ...Array.from({ length: 10 }, (_, i) => sample(1000, i)),
      ...Array.from({ length: 3 }, (_, i) => sample(1001, i)),
      ...Array.from({ length: 3 }, (_, i) => sample(1002, i)),
    ];
    const cap = 1_500; // a few samples of ~350 bytes
    const first = await exportOf(samples, 1000, 2000, cap);
    expect(first.result.get('complete')).toBe('false');
    expect(first.result.get('next_from_ms')).toBe('1001');
    expect(first.ts.length).toBeGreaterThan(0);
    expect(first.ts.every((t) => t === 1000)).toBe(true);
    expect(Number(first.result.get('skipped'))).toBe(10 - first.ts.length);

    // Following the continuations ends, each file starts past the previous one's timestamps, and the
    // later timestamps are each written whole.
    let from = 1001;
    const seen: number[] = [];
    for (let n = 0; n < 10; n++) {
      const part = await exportOf(samples, from, 2000, cap);
      expect(part.ts.length).toBeGreaterThan(0);
      expect(Math.min(...part.ts)).toBeGreaterThanOrEqual(from);
      seen.push(...part.ts);
      if (part.result.get('complete') === 'true') break;
      const next = Number(part.result.get('next_from_ms'));
      expect(next).toBeGreaterThan(from);
      from = next;
    }
    expect(seen).toEqual([1001, 1001, 1001, 1002, 1002, 1002]);
  });

  it('refuses a byte cap too small for a few worst-case samples at start', () => {
    expect(() => tunablesFromEnv({ FLEETGW_HISTORY_EXPORT_MAX_BYTES: '1500' })).toThrow(/FLEETGW_HISTORY_EXPORT_MAX_BYTES must be at least 65536/);
    expect(tunablesFromEnv({ FLEETGW_HISTORY_EXPORT_MAX_BYTES: '65536' }).historyExportMaxBytes).toBe(65_536);
    expect(() => tunablesFromEnv({ FLEETGW_HISTORY_EXPORTS: '65' })).toThrow(/FLEETGW_HISTORY_EXPORTS must be at most 64/);
  });
});
