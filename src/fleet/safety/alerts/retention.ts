/**
 * Retention of resolved alerts: removed (record and index keys) once resolved longer ago than
 * `retentionMs` (default 90 days, the mission history window). Unresolved alerts are never removed.
 *
 * The fleet index (`alertsByFleet/<fleet>/<openedAt>/<alert>`) is time-ordered inside each fleet, and
 * an alert resolves after it opened, so a run reads only each fleet's head opened before the cutoff
 * and then seeks to the next fleet. Each run reads at most `scanBudget` keys and removes at most
 * `batch` alerts in one transaction; the next run (hourly) carries on.
 */
import type { Logger } from 'pino';
import { KEY_END, parseSortableNumber } from '../../../store/keys.js';
import type { Store } from '../../../store/lmdb.js';
import { alertIndexKeys, ALERTS_BY_FLEET } from './keys.js';

const DAY = 24 * 3600 * 1000;

export interface AlertRetention {
  retentionMs: number;
  batch: number;
  scanBudget: number;
}

export const DEFAULT_ALERT_RETENTION: AlertRetention = { retentionMs: 90 * DAY, batch: 10_000, scanBudget: 50_000 };

/** One retention run; resolves with the number of alerts removed. */
export async function sweepResolvedAlerts(store: Store, nowMs: number, opts: Partial<AlertRetention> = {}): Promise<number> {
  const { retentionMs, batch, scanBudget } = { ...DEFAULT_ALERT_RETENTION, ...opts };
  const cutoff = nowMs - retentionMs;
  const root = `${ALERTS_BY_FLEET}/`;
  const doomed: string[] = [];
  let start = root;
  let scanned = 0;
  // Each pass reads from `start` to the end; a fleet whose head is recent restarts the read at the next fleet.
  outer: while (scanned < scanBudget && doomed.length < batch) {
    for (const key of store.index.getKeys({ start, end: `${root}${KEY_END}` })) {
      scanned++;
      // <root><fleet>/<openedAt>/<alert>
      const [fleetId, openedAt, alertId] = key.slice(root.length).split('/') as [string, string, string];
      if (parseSortableNumber(openedAt) >= cutoff) {
        // The rest of this fleet opened after the cutoff: next fleet.
        start = `${root}${fleetId}/${KEY_END}`;
        continue outer;
      }
      const a = store.alerts.get(alertId);
      if (a !== undefined && a.state === 'resolved' && (a.resolvedAtMs ?? nowMs) < cutoff) doomed.push(alertId);
      if (scanned >= scanBudget || doomed.length >= batch) break outer;
    }
    break;
  }
  if (doomed.length === 0) return 0;
  await store.root.transaction(() => {
    for (const id of doomed) {
      const a = store.alerts.get(id);
      if (a === undefined || a.state !== 'resolved') continue;
      for (const k of alertIndexKeys(a)) store.index.removeSync(k);
      store.alerts.removeSync(id);
    }
  });
  return doomed.length;
}

/** Runs {@link sweepResolvedAlerts} every hour (and once a minute after start); returns the stop function. */
export function startAlertRetention(store: Store, opts: { log?: Logger; intervalMs?: number; retention?: Partial<AlertRetention> } = {}): () => void {
  let running = false;
  const run = (): void => {
    if (running) return;
    running = true;
    sweepResolvedAlerts(store, Date.now(), opts.retention).then(
      (n) => {
        running = false;
        if (n > 0) opts.log?.info({ removed: n }, `alerts retention: removed ${n} resolved alerts`);
      },
      (err: unknown) => {
        running = false;
        opts.log?.error({ err }, 'alerts retention failed');
      },
    );
  };
  const first = setTimeout(run, 60_000);
  const timer = setInterval(run, opts.intervalMs ?? 3600_000);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
