/**
 * Master control's stop marks in LMDB (src/vda5050/link/stop-marks.ts): raised, never lowered, and
 * still there after the store is opened again (a gateway restart).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/lmdb.js';
import { stopMarkKey } from '../../src/vda5050/link/keys.js';
import { LmdbStopMarks } from '../../src/vda5050/link/stop-marks.js';
import { until } from '../support/until.js';

describe('LmdbStopMarks', () => {
  it('raises a robot\'s mark, never lowers it, and keeps it across a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-stop-marks-'));
    try {
      const errors: unknown[] = [];
      let store = openStore(dir);
      let marks = new LmdbStopMarks(store, (err) => errors.push(err));
      expect(marks.get('r1')).toBe(0n);
      marks.raise('r1', 7n);
      await until(() => marks.get('r1') === 7n, 5_000, 'the mark stored');
      marks.raise('r1', 3n);
      marks.raise('r2', 18_446_744_073_709_551_615n); // the largest uint64 seq
      await store.meta.flushed;
      expect(marks.get('r1')).toBe(7n);
      await store.close();
      store = openStore(dir);
      marks = new LmdbStopMarks(store, (err) => errors.push(err));
      expect(marks.get('r1')).toBe(7n);
      expect(marks.get('r2')).toBe(18_446_744_073_709_551_615n);
      // A value this version did not write reads as no mark.
      await store.meta.put(stopMarkKey('r3'), { not: 'a seq' });
      expect(marks.get('r3')).toBe(0n);
      expect(errors).toEqual([]);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
