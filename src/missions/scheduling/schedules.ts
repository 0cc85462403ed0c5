/**
 * Schedule records (`schedules` db) and their index keys (in `index`):
 *   schedulesByFleet/<fleetId>/<createdAt 16 hex>/<scheduleId>  every schedule, listing order
 *   schedulesByTemplate/<missionId>/<scheduleId>                while a non-cancelled schedule
 *                                                               references the template and still
 *                                                               has a fire to come or one open
 *   activeSchedules/<fleetId>/<scheduleId>                      while not cancelled (counted by key,
 *                                                               without decoding records)
 * Plus the API row shape and keyset paging of `GET /v1/mission-schedule`.
 */
import { randomUUID } from 'node:crypto';
import { apiError } from '../../errors/catalog.js';
import { nextFireAfter } from './recurrence.js';
import type { Store } from '../../store/lmdb.js';
import type { ScheduleRecord, ScheduleSpec } from './records.js';

/** Deployment window used when a request gives none (documented in OpenAPI). */
export const DEFAULT_DEPLOYMENT_DEADLINE_MS = 300_000;
export const DEFAULT_RETRY_INTERVAL_SECS = 30;
/** Active (non-cancelled) schedules per fleet; a create beyond it is refused (409). */
export const MAX_ACTIVE_SCHEDULES_PER_FLEET = 20_000;

const hex = (ms: number): string => ms.toString(16).padStart(16, '0');

export function fleetKey(s: Pick<ScheduleRecord, 'fleetId' | 'createdAtMs' | 'scheduleId'>): string {
  return `schedulesByFleet/${s.fleetId}/${hex(s.createdAtMs)}/${s.scheduleId}`;
}

function activeKey(s: Pick<ScheduleRecord, 'fleetId' | 'scheduleId'>): string {
  return `activeSchedules/${s.fleetId}/${s.scheduleId}`;
}

function templateKey(s: ScheduleRecord): string | null {
  return s.target.type === 'mission' ? `schedulesByTemplate/${s.target.missionId}/${s.scheduleId}` : null;
}

export interface NewSchedule {
  orgId: string;
  fleetId: string;
  target: ScheduleRecord['target'];
  robotIds: string[];
  schedule: ScheduleSpec | null;
  deploymentDeadlineMs: number | null;
  retryLimit: number;
  retryIntervalSecs: number;
  createdBy: { apiKeyId: string };
}

/**
 * First due time: `null` schedule (fire now) and `once` fire at their time, at once when it has
 * passed; a recurrence fires at its first occurrence at or after now (nothing before the request
 * is back-filled).
 */
export function firstFireAt(spec: ScheduleSpec | null, nowMs: number): number | null {
  if (spec === null) return nowMs;
  if (spec.kind === 'once') return spec.startTimeMs;
  return nextFireAfter(spec, Math.max(nowMs, spec.startTimeMs) - 1);
}

/** Builds a new schedule record (status `scheduled`). */
export function newScheduleRecord(n: NewSchedule, nowMs: number): ScheduleRecord {
  const scheduleId = randomUUID();
  return {
    scheduleId,
    orgId: n.orgId,
    fleetId: n.fleetId,
    target: n.target,
    robotIds: n.robotIds,
    schedule: n.schedule,
    status: 'scheduled',
    lastFailureReason: null,
    lastFailureDetail: null,
    deploymentDeadlineMs: n.deploymentDeadlineMs,
    retryLimit: n.retryLimit,
    retryIntervalSecs: n.retryIntervalSecs,
    nextFireAtMs: firstFireAt(n.schedule, nowMs),
    cancelled: false,
    correlationId: randomUUID(),
    createdBy: n.createdBy,
    pausedReason: null,
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
    openFireKey: null,
    firesTotal: 0,
    skippedFires: 0,
    lastRunId: null,
  };
}

/** Inside a write transaction: stores a new schedule with its index keys. */
export function putNewSchedule(store: Store, s: ScheduleRecord): void {
  store.schedules.putSync(s.scheduleId, s);
  store.index.putSync(fleetKey(s), true);
  store.index.putSync(activeKey(s), true);
  const tk = templateKey(s);
  if (tk) store.index.putSync(tk, true);
}

/** Inside a write transaction: marks a schedule cancelled and drops its template reference. */
export function putCancelled(store: Store, s: ScheduleRecord): void {
  store.schedules.putSync(s.scheduleId, s);
  store.index.removeSync(activeKey(s));
  const tk = templateKey(s);
  if (tk) store.index.removeSync(tk);
}

/**
 * Inside a write transaction: keeps the template reference in step with the schedule. A schedule
 * with no fire to come and none open (a finished `once`, a spent cron) no longer holds its template;
 * a paused one does (a re-bind resumes it).
 */
export function syncTemplateRef(store: Store, s: ScheduleRecord): void {
  const tk = templateKey(s);
  if (!tk) return;
  if (!s.cancelled && (s.nextFireAtMs !== null || s.openFireKey !== null || (s.pausedReason ?? null) !== null)) store.index.putSync(tk, true);
  else store.index.removeSync(tk);
}

/** Non-cancelled schedules of a fleet (a key count: no record is decoded). */
export function countActiveSchedules(store: Store, fleetId: string): number {
  return store.index.getKeysCount({ start: `activeSchedules/${fleetId}/`, end: `activeSchedules/${fleetId}/\uffff` });
}

/** How many schedules the fleet has ever had, cancelled included (counted by key, nothing decoded). */
export function countFleetSchedules(store: Store, fleetId: string): number {
  return store.index.getKeysCount({ start: `schedulesByFleet/${fleetId}/`, end: `schedulesByFleet/${fleetId}/\uffff` });
}

/** A page of a fleet's schedules, newest first; `before` is the last key of the previous page. */
export function pageSchedules(store: Store, fleetId: string, limit: number, beforeKey: string | null): { items: ScheduleRecord[]; lastKey: string | null; more: boolean } {
  const prefix = `schedulesByFleet/${fleetId}/`;
  const items: ScheduleRecord[] = [];
  let lastKey: string | null = null;
  let more = false;
  for (const key of store.index.getKeys({ start: beforeKey ?? `${prefix}\uffff`, end: prefix, reverse: true })) {
    if (key === beforeKey) continue;
    if (items.length >= limit) {
      more = true;
      break;
    }
    const s = store.schedules.get(key.slice(key.lastIndexOf('/') + 1));
    if (!s) continue;
    items.push(s);
    lastKey = key;
  }
  return { items, lastKey, more };
}

/** A schedule of the fleet. @throws ApiError `schedule_not_found` */
export function requireSchedule(store: Store, fleetId: string, scheduleId: string): ScheduleRecord {
  const s = store.schedules.get(scheduleId);
  if (!s || s.fleetId !== fleetId) throw apiError('schedule_not_found', { scheduleId });
  return s;
}
