/**
 * Bounded retention of fault records: a fault cleared more than `retentionMs` ago (default 90 days,
 * the mission history window) is removed with its index keys. Active faults are kept however old.
 * Hourly; each run reads at most `scanBudget` index keys and removes at most `batch` records in one
 * transaction, fleet by fleet, oldest first (a fleet whose old head holds active faults is re-read on
 * every run: bounded by its active faults). docs/faults.md.
 */
import type { Logger } from 'pino';
import type { Store } from '../../../store/lmdb.js';
import { oldFaultsOfFleet, removeFaultSync } from './faults.js';
import type { FaultRecord } from './records.js';
import { allFleetIds } from '../../../store/identity-reads.js';

const DAY = 24 * 3600 * 1000;

export interface FaultRetention {
  retentionMs: number;
  batch: number;
  scanBudget: number;
}

export const DEFAULT_FAULT_RETENTION: FaultRetention = { retentionMs: 90 * DAY, batch: 10_000, scanBudget: 50_000 };

/** One retention pass; resolves with the number of fault records removed. */
export async function sweepFaults(store: Store, nowMs: number, policy: FaultRetention = DEFAULT_FAULT_RETENTION): Promise<number> {
  const cutoff = nowMs - policy.retentionMs;
  const doomed: FaultRecord[] = [];
  let budget = policy.scanBudget;
  for (const fleetId of allFleetIds(store)) {
    if (budget <= 0 || doomed.length >= policy.batch) break;
    const { faults, scanned } = oldFaultsOfFleet(store, fleetId, cutoff, Math.min(budget, policy.batch - doomed.length + 1000));
    budget -= scanned;
    for (const f of faults) {
      if (doomed.length >= policy.batch) break;
      if (f.state === 'cleared' && f.clearedAtMs !== null && f.clearedAtMs < cutoff) doomed.push(f);
    }
  }
  if (doomed.length === 0) return 0;
  await store.root.transaction(() => {
    for (const f of doomed) removeFaultSync(store, f);
  });
  return doomed.length;
}

/** Runs {@link sweepFaults} every hour (first run after a minute); returns the stop function. */
export function startFaultRetention(store: Store, opts: { log?: Logger; policy?: FaultRetention; everyMs?: number } = {}): () => void {
  let running = false;
  const run = (): void => {
    if (running) return;
    running = true;
    sweepFaults(store, Date.now(), opts.policy)
      .then((n) => {
        if (n > 0) opts.log?.info({ removed: n }, 'fault retention: removed cleared faults');
      })
      .catch((err: unknown) => opts.log?.error({ err }, 'fault retention failed'))
      .finally(() => {
        running = false;
      });
  };
  const first = setTimeout(run, 60_000);
  first.unref();
  const timer = setInterval(run, opts.everyMs ?? 3600_000);
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
