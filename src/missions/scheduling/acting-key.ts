/**
 * Who a schedule acts as, and what happens when that key may no longer act.
 *
 * A schedule acts as the API key that created it (`createdBy.apiKeyId`), or the key that re-bound it
 * (edit-schedule `rebind_to_caller`). Every robot command a fire sends (MissionStart, or the
 * scheduled command) is sent and audited as that key, and only while the key may still do what the
 * creating tool required: it exists, is not revoked, has not expired, still covers the schedule's
 * organization and fleet, and still holds `missions:write` (mission schedules) or
 * `operations:control` + `robots:write` (command schedules). This is checked when a fire falls due
 * and again right before each command is submitted (a fire may wait minutes for a robot, or resume
 * after a restart).
 *
 * When the key may not act, nothing is sent: the open fire ends `failed` with reason
 * `creator_key_invalid` (no retry), and the schedule is paused: status `failed`, `last_failure_reason`
 * `creator_key_invalid` with the why in `last_failure_detail`, `paused_reason` set, no next fire, and
 * a `schedule.paused` event on its timeline. It stays paused until a key with the required
 * permissions re-binds it (edit-schedule `rebind_to_caller: true`), or it is cancelled.
 */
import type { EventLog } from '../../events/index.js';
import { apiError } from '../../errors/catalog.js';
import type { Store } from '../../store/lmdb.js';
import type { FireRecord, ScheduleRecord } from './records.js';
import { syncTemplateRef } from './schedules.js';
import { scheduleEvent } from './timeline.js';
import { apiKeyRecord } from '../../auth/api-keys.js';

/** `last_failure_reason` / `paused_reason` of a schedule whose acting key may no longer act. */
export const CREATOR_KEY_INVALID = 'creator_key_invalid';

/** What the dispatcher and command fires ask before they send a fire's commands. */
export interface ActingKeyGuard {
  /** Why the schedule's acting key may not send commands now, or null when it may. */
  problem(s: ScheduleRecord): string | null;
  /** Ends fire `f` and pauses its schedule (the caller has stopped working on the fire). */
  pause(f: FireRecord, detail: string): void;
}

/** Permissions the creating tool required, which the acting key must still hold at every fire. */
export function requiredPermissions(s: Pick<ScheduleRecord, 'target'>): readonly string[] {
  return s.target.type === 'mission' ? ['missions:write'] : ['operations:control', 'robots:write'];
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Why the schedule's acting key may not send its fire's commands at `nowMs`, or null when it may.
 * Reads the key record from LMDB, so `fleetgw admin revoke-key` in another process counts at once.
 */
export function actingKeyProblem(store: Store, s: ScheduleRecord, nowMs: number): string | null {
  const id = s.createdBy.apiKeyId;
  const k = apiKeyRecord(store, id);
  if (k === undefined) return `API key ${id}, which the schedule acts as, no longer exists`;
  if (k.revokedAtMs !== null) return `API key ${id}, which the schedule acts as, was revoked at ${iso(k.revokedAtMs)}`;
  if (k.expiresAtMs !== null && nowMs >= k.expiresAtMs) return `API key ${id}, which the schedule acts as, expired at ${iso(k.expiresAtMs)}`;
  if (k.orgId !== s.orgId || (k.fleetId !== null && k.fleetId !== s.fleetId)) return `API key ${id}, which the schedule acts as, no longer covers fleet ${s.fleetId}`;
  const missing = requiredPermissions(s).find((p) => !k.permissions.includes(p));
  if (missing !== undefined) return `API key ${id}, which the schedule acts as, no longer holds ${missing}`;
  return null;
}

/**
 * Commits the pause in one transaction: fire `f` (when given) ends `failed` with reason
 * `creator_key_invalid`, and the schedule (unless cancelled meanwhile) is paused with no next fire,
 * its open fire cleared and its `schedule.paused` event appended (whoever sees the pause sees why).
 * `f` is updated in place to what was written.
 * @returns the schedule as written, or undefined when it no longer exists
 */
export async function commitPaused(store: Store, events: EventLog, scheduleId: string, f: FireRecord | null, detail: string, nowMs: number): Promise<ScheduleRecord | undefined> {
  let sched: ScheduleRecord | undefined;
  await store.root.transaction(() => {
    const s = store.schedules.get(scheduleId);
    if (f !== null) {
      Object.assign(f, { phase: 'failed', failureReason: CREATOR_KEY_INVALID, failureDetail: detail, retryAtMs: null, endedAtMs: nowMs });
      store.fires.putSync(f.fireKey, f);
    }
    if (!s) return;
    const openFireKey = f !== null && s.openFireKey === f.fireKey ? null : s.openFireKey;
    sched = s.cancelled
      ? { ...s, openFireKey, updatedAtMs: nowMs }
      : { ...s, openFireKey, pausedReason: CREATOR_KEY_INVALID, status: 'failed', lastFailureReason: CREATOR_KEY_INVALID, lastFailureDetail: detail, nextFireAtMs: null, updatedAtMs: nowMs };
    store.schedules.putSync(scheduleId, sched);
    syncTemplateRef(store, sched);
    if (!s.cancelled) {
      scheduleEvent(events, sched, nowMs, 'schedule.paused', { reason: CREATOR_KEY_INVALID, detail, apiKeyId: s.createdBy.apiKeyId, ...(f !== null ? { fireKey: f.fireKey } : {}) });
    }
  });
  return sched;
}

/**
 * A request to re-bind a schedule must come from a key that could have created it.
 * @throws ApiError 403 `forbidden_permission`
 */
export function requireRebindPermissions(permissions: readonly string[], s: Pick<ScheduleRecord, 'target'>): void {
  const missing = requiredPermissions(s).find((p) => !permissions.includes(p));
  if (missing !== undefined) throw apiError('forbidden_permission', { permission: missing });
}
