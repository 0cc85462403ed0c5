/**
 * The two ways an attempt of a mission fire ends, each one LMDB transaction over the fire and its
 * schedule (so a restart sees both or neither): deployed (the robot acknowledged MissionStart), or
 * failed (retried after `retry_interval_secs` while `retry_limit` allows, else the fire and the
 * schedule are `failed`). The dispatcher (dispatcher.ts) calls these and emits the events.
 */
import type { Store } from '../../store/lmdb.js';
import type { FireRecord, ScheduleRecord } from './records.js';
import { syncTemplateRef } from './schedules.js';

/**
 * Commits the fire as `deployed` and the schedule's status (its open fire cleared, `lastRunId` set).
 * @returns the schedule as written, or undefined when it no longer exists
 */
export async function commitDeployed(store: Store, f: FireRecord, now: number): Promise<ScheduleRecord | undefined> {
  let sched: ScheduleRecord | undefined;
  await store.root.transaction(() => {
    const s = store.schedules.get(f.scheduleId);
    store.fires.putSync(f.fireKey, { ...f, phase: 'deployed', endedAtMs: now });
    if (!s) return;
    sched = { ...s, openFireKey: s.openFireKey === f.fireKey ? null : s.openFireKey, lastRunId: f.runId, updatedAtMs: now };
    sched.status = 'deployed';
    store.schedules.putSync(s.scheduleId, sched);
    syncTemplateRef(store, sched);
  });
  return sched;
}

/**
 * Commits a failed attempt: `retry_wait` when the schedule allows another try, else `failed` for
 * the fire and the schedule. `f` is updated in place to what was written.
 * @returns the schedule as written (undefined when it no longer exists) and whether a retry follows
 */
export async function commitFailedAttempt(
  store: Store,
  f: FireRecord,
  reason: string,
  detail: string,
  now: number,
): Promise<{ sched: ScheduleRecord | undefined; retry: boolean }> {
  let sched: ScheduleRecord | undefined;
  let retry = false;
  await store.root.transaction(() => {
    const s = store.schedules.get(f.scheduleId);
    retry = s !== undefined && !s.cancelled && f.attempt < s.retryLimit;
    const next: FireRecord = retry
      ? { ...f, phase: 'retry_wait', retryAtMs: now + (s?.retryIntervalSecs ?? 0) * 1000, robotId: null, runId: null, failureReason: reason, failureDetail: detail }
      : { ...f, phase: 'failed', failureReason: reason, failureDetail: detail, endedAtMs: now };
    store.fires.putSync(f.fireKey, next);
    Object.assign(f, next);
    if (!s) return;
    sched = { ...s, lastFailureReason: reason, lastFailureDetail: detail, updatedAtMs: now };
    if (!retry) {
      if (sched.openFireKey === f.fireKey) sched.openFireKey = null;
      sched.status = 'failed';
    }
    store.schedules.putSync(s.scheduleId, sched);
    syncTemplateRef(store, sched);
  });
  return { sched, retry };
}
