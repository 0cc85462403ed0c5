import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

describe('stop trace (a benchmark aid)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.resetModules();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('appends one JSON line per traced command to the file FLEETGW_BENCH_STOP_TRACE names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-stop-trace-'));
    dirs.push(dir);
    const file = join(dir, 'trace.jsonl');
    vi.resetModules();
    const trace = await import('../../src/api/stop-trace.js');
    const { traceStop } = trace;
    trace.setStopTraceFile(file);
    expect(trace.stopTraceOn).toBe(true);
    traceStop('c1', 1, 2, 3, 4);
    traceStop('c2', 5, 6, 7, 8);
    await vi.waitFor(() => expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2));
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual([
      { commandId: 'c1', start: 1, sent: 2, acked: 3, committed: 4 },
      { commandId: 'c2', start: 5, sent: 6, acked: 7, committed: 8 },
    ]);
  });

  it('records nothing when no file is named', async () => {
    vi.resetModules();
    const trace = await import('../../src/api/stop-trace.js');
    trace.setStopTraceFile(undefined);
    expect(trace.stopTraceOn).toBe(false);
    const { traceStop } = trace;
    expect(() => traceStop('c1', 1, 2, 3, 4)).not.toThrow();
  });
});
