/**
 * TEST DOUBLE base of the telemetry store interface (src/telemetry/store/sample-store.ts): every
 * member, as an empty store set up at open that reads no files would answer (inserts accepted and
 * kept nowhere, no rows to read). Test stores extend it and override what their test plays, so the
 * interface stays complete with no optional members. Only for tests of what sits in front of a store
 * (the insert queue's timing and replay); what a store does with its rows is tested on the real ones.
 */
import type { BoundQuery, Rows } from '../../src/telemetry/store/bound-query.js';
import type { MigrationResult } from '../../src/telemetry/store/migrations.js';
import type { SampleStore, StoreKind } from '../../src/telemetry/store/sample-store.js';

export class NoopSampleStore implements SampleStore {
  readonly kind: StoreKind = 'chdb';
  readonly version: string = 'test';
  /** No table: no migration ran. */
  readonly schema: MigrationResult | null = { from: 0, to: 0, applied: [], newerThanKnown: false };
  readonly setUpError: string | null = null;
  readonly insertFile: SampleStore['insertFile'] = null;
  readonly probe: SampleStore['probe'] = null;

  /** An accessor, so a test store can make it depend on its set-up. */
  get dedup(): SampleStore['dedup'] {
    return 'token';
  }

  setUpDone(): Promise<void> {
    return Promise.resolve();
  }

  ensureSetUp(): Promise<void> {
    return Promise.resolve();
  }

  insert(_chunks: readonly Uint8Array[], _totalBytes: number, _rows: number, _token?: string): Promise<void> {
    return Promise.resolve();
  }

  /** `0`: what the insert queue's row probe (a `count()`) finds in an empty store. */
  queryText(_sql: string): Promise<string> {
    return Promise.resolve('0\n');
  }

  select(_query: BoundQuery): Promise<Rows> {
    return Promise.resolve([]);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
