import { execFileSync } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_TUNABLES, tunablesFromEnv } from '../../src/config.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway } from '../../src/gateway/gateway.js';
import { encodeBatch, until } from '../telemetry/helpers.js';
import { applyHeapGrowth, appliedHeapGrowingPercent, FOLLOW_INTERVAL_MS, HeapGrowthPolicy, LOW_SAMPLES_PER_S, PEAK_SAMPLES_PER_S } from '../../src/gateway/heap-growth.js';

/** Runs `fn` with vitest's fake timers, restoring real ones whatever happens. */
function withFakeTimers(fn: () => void): void {
  vi.useFakeTimers();
  try {
    fn();
  } finally {
    vi.useRealTimers();
  }
}

describe('heap growth (FLEETGW_HEAP_GROWING_PERCENT)', () => {
  it('defaults to 100 at peak and 50 at low load, read from the environment, named when invalid', () => {
    expect(DEFAULT_TUNABLES.heapGrowingPercent).toBe(100);
    expect(DEFAULT_TUNABLES.heapGrowingPercentLowLoad).toBe(50);
    expect(tunablesFromEnv({ FLEETGW_HEAP_GROWING_PERCENT: '50' }).heapGrowingPercent).toBe(50);
    expect(tunablesFromEnv({ FLEETGW_HEAP_GROWING_PERCENT_LOW_LOAD: '30' }).heapGrowingPercentLowLoad).toBe(30);
    expect(() => tunablesFromEnv({ FLEETGW_HEAP_GROWING_PERCENT: '0' })).toThrow(/FLEETGW_HEAP_GROWING_PERCENT/);
    expect(() => tunablesFromEnv({ FLEETGW_HEAP_GROWING_PERCENT_LOW_LOAD: 'x' })).toThrow(/FLEETGW_HEAP_GROWING_PERCENT_LOW_LOAD/);
  });

  it('follows the telemetry rate: low-load value at start, peak above the upper bound, back only under the lower one', () => {
    const set: string[] = [];
    const policy = new HeapGrowthPolicy(50, 100, (f) => set.push(f));
    expect(set).toEqual(['--heap-growing-percent=50']);
    expect(policy.observe(0)).toBeNull();
    expect(policy.observe(PEAK_SAMPLES_PER_S)).toBeNull(); // at the bound: not above it
    expect(policy.atPeak).toBe(false);
    expect(policy.observe(PEAK_SAMPLES_PER_S + 1)).toBe(100);
    expect(policy.percent).toBe(100);
    expect(policy.atPeak).toBe(true);
    // Between the bounds it holds (no flapping around one bound).
    expect(policy.observe(LOW_SAMPLES_PER_S + 1)).toBeNull();
    expect(policy.observe(PEAK_SAMPLES_PER_S * 8)).toBeNull();
    expect(policy.atPeak).toBe(true);
    expect(policy.observe(LOW_SAMPLES_PER_S - 1)).toBe(50);
    expect(policy.atPeak).toBe(false);
    expect(policy.observe(LOW_SAMPLES_PER_S + 1)).toBeNull();
    expect(set).toEqual(['--heap-growing-percent=50', '--heap-growing-percent=100', '--heap-growing-percent=50']);
    // Both values are checked at construction, not at the first switch (a timer would throw later).
    expect(() => new HeapGrowthPolicy(50, 0, () => {})).toThrow(/positive integer/);
    expect(() => new HeapGrowthPolicy(0, 100, () => {})).toThrow(/positive integer/);
    // Equal values: nothing to switch.
    const fixed: string[] = [];
    const same = new HeapGrowthPolicy(80, 80, (f) => fixed.push(f));
    expect(same.observe(PEAK_SAMPLES_PER_S * 2)).toBeNull();
    expect(fixed).toEqual(['--heap-growing-percent=80']);
  });

  it('sets the V8 flag, and refuses what V8 would misread', () => {
    const set: string[] = [];
    applyHeapGrowth(150, (f) => set.push(f));
    expect(set).toEqual(['--heap-growing-percent=150']);
    expect(() => applyHeapGrowth(0, () => {})).toThrow(/positive integer/);
    expect(() => applyHeapGrowth(1.5, () => {})).toThrow(/positive integer/);
  });

  it('follows the sample counter: a switch per crossing, told to the caller, and nothing after stop', () => {
    withFakeTimers(() => {
      const set: string[] = [];
      const policy = new HeapGrowthPolicy(50, 100, (f) => set.push(f));
      let samples = 0;
      const switches: number[] = [];
      const stop = policy.follow(() => samples, (percent) => switches.push(percent), 1_000);
      samples += 100_000; // 100,000 samples/s over the first second
      vi.advanceTimersByTime(1_000);
      expect(switches).toEqual([100]);
      samples += 1_000; // 1,000 samples/s
      vi.advanceTimersByTime(1_000);
      expect(switches).toEqual([100, 50]);
      stop();
      samples += 1_000_000;
      vi.advanceTimersByTime(5_000);
      expect(switches).toEqual([100, 50]);
      expect(set).toEqual(['--heap-growing-percent=50', '--heap-growing-percent=100', '--heap-growing-percent=50']);
    });
  });

  it('reads the rate every second by default, so a peak gets its headroom within a second', () => {
    withFakeTimers(() => {
      const policy = new HeapGrowthPolicy(50, 100, () => {});
      let samples = 0;
      const switches: number[] = [];
      const stop = policy.follow(() => samples, (percent) => switches.push(percent));
      samples += 400_000;
      vi.advanceTimersByTime(FOLLOW_INTERVAL_MS);
      expect(FOLLOW_INTERVAL_MS).toBe(1_000);
      expect(switches).toEqual([100]);
      stop();
    });
  });

  it('tells of each peak change, also when both percents are equal (no percent switch to hang it on)', () => {
    withFakeTimers(() => {
      const policy = new HeapGrowthPolicy(80, 80, () => {});
      let samples = 0;
      const switches: number[] = [];
      const peaks: boolean[] = [];
      const stop = policy.follow(() => samples, (percent) => switches.push(percent), 1_000, (atPeak) => peaks.push(atPeak));
      samples += 100_000;
      vi.advanceTimersByTime(1_000);
      samples += 100_000; // still at peak: no new event
      vi.advanceTimersByTime(1_000);
      samples += 30_000; // between the bounds: holds
      vi.advanceTimersByTime(1_000);
      samples += 1_000;
      vi.advanceTimersByTime(1_000);
      expect(switches).toEqual([]);
      expect(peaks).toEqual([true, false]);
      stop();
    });
  });

  it('names a flag this Node\'s V8 has (setFlagsFromString ignores unknown flags silently)', () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    expect(options).toContain('--heap-growing-percent');
  });

  it('a gateway at peak telemetry has its ingest allocate the row buffers at once (setPeakLoad)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-heap-peak-'));
    const gw = await startGateway({ dataDir: dir, host: '127.0.0.1', httpPort: 0, grpcPort: 0, clickhouseUrl: null, tls: 'insecure' });
    try {
      // 100,000 samples in well under a second: the next reading of the rate is above the peak bound.
      const frame = encodeBatch(Date.now(), 1_000);
      for (let i = 0; i < 100; i++) gw.ingest.push('peak-robot', 'peak-fleet', frame);
      await gw.ingest.flush();
      // The 256 MiB default high-water mark: 64 row buffers; the 100,000 rows alone fill ~6.
      await until(() => gw.ingest.stats().rowArenaBuffers >= 64, 10_000, 'row buffers allocated for the peak');
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('a starting gateway applies its low-load tunable to the process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-heap-growth-'));
    const gw = await startGateway({ dataDir: dir, host: '127.0.0.1', httpPort: 0, grpcPort: 0, clickhouseUrl: null, tls: 'insecure', tunables: { heapGrowingPercentLowLoad: 37 } });
    try {
      expect(appliedHeapGrowingPercent()).toBe(37);
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
