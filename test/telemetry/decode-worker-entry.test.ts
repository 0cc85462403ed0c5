import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { describe, expect, it } from 'vitest';
import { decodeWorkerPath } from '../../src/telemetry/decode/decode-pool.js';

describe('decode worker entry (the file piscina loads)', () => {
  it('is CommonJS, so piscina require()s it without entering require(esm)', () => {
    const path = decodeWorkerPath();
    expect(path.endsWith('.cjs')).toBe(true);
  });

  it("hands piscina the worker's handler: __esModule keeps `default` unwrapped, and it settles to a function", async () => {
    const required = createRequire(import.meta.url)(decodeWorkerPath()) as { __esModule?: boolean; default?: unknown };
    expect(required.__esModule).toBe(true);
    const handler = await required.default;
    expect(typeof handler).toBe('function');
    // vitest loads modules through its own graph, so compare by identity of name, not reference.
    expect((handler as { name: string }).name).toBe('run');
  });

  it('kills its thread at start with the real error when the worker module cannot be imported, and piscina emits it', async () => {
    // The shim alone, in a directory without decode-worker.js: its import() fails.
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-entry-'));
    try {
      const entry = join(dir, 'decode-worker-entry.cjs');
      copyFileSync(decodeWorkerPath(), entry);
      const worker = new Worker(entry);
      const [error, code] = await new Promise<[unknown, number]>((resolve) => {
        let seen: unknown = null;
        worker.on('error', (e) => {
          seen = e;
        });
        worker.on('exit', (c) => resolve([seen, c]));
      });
      expect(code).toBe(1);
      expect((error as { code?: string }).code).toBe('ERR_MODULE_NOT_FOUND');
      expect(String(error)).toContain(join(dir, 'decode-worker.js'));
      // Through piscina, as the decode pool loads it: the pool emits that error. The decode pool
      // does not listen for it, so in the gateway it is an uncaught exception and the process exits
      // with it, instead of piscina starting a thread that dies again for every task.
      const pool = new Piscina({ filename: entry, minThreads: 1, maxThreads: 1 });
      const errors: unknown[] = [];
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('piscina emitted no error within 10 s')), 10_000);
          pool.on('error', (e) => {
            errors.push(e);
            clearTimeout(timer);
            resolve();
          });
        });
      } finally {
        await pool.destroy();
      }
      expect((errors[0] as { code?: string }).code).toBe('ERR_MODULE_NOT_FOUND');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
