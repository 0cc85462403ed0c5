import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNABLES, tunablesFromEnv } from '../../src/config.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway } from '../../src/gateway/gateway.js';
import { applyHeapGrowth, appliedHeapGrowingPercent } from '../../src/gateway/heap-growth.js';

describe('heap growth (FLEETGW_HEAP_GROWING_PERCENT)', () => {
  it('defaults to 100 and is read from the environment, named when invalid', () => {
    expect(DEFAULT_TUNABLES.heapGrowingPercent).toBe(100);
    expect(tunablesFromEnv({ FLEETGW_HEAP_GROWING_PERCENT: '50' }).heapGrowingPercent).toBe(50);
    expect(() => tunablesFromEnv({ FLEETGW_HEAP_GROWING_PERCENT: '0' })).toThrow(/FLEETGW_HEAP_GROWING_PERCENT/);
  });

  it('sets the V8 flag, and refuses what V8 would misread', () => {
    const set: string[] = [];
    applyHeapGrowth(150, (f) => set.push(f));
    expect(set).toEqual(['--heap-growing-percent=150']);
    expect(() => applyHeapGrowth(0, () => {})).toThrow(/positive integer/);
    expect(() => applyHeapGrowth(1.5, () => {})).toThrow(/positive integer/);
  });

  it('names a flag this Node\'s V8 has (setFlagsFromString ignores unknown flags silently)', () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    expect(options).toContain('--heap-growing-percent');
  });

  it('a starting gateway applies its tunable to the process', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-heap-growth-'));
    const gw = await startGateway({ dataDir: dir, host: '127.0.0.1', httpPort: 0, grpcPort: 0, clickhouseUrl: null, tls: 'insecure', tunables: { heapGrowingPercent: 37 } });
    try {
      expect(appliedHeapGrowingPercent()).toBe(37);
    } finally {
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
