import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { decodeWorkerPath } from '../../src/telemetry/decode-pool.js';

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
});
