/**
 * Schedule records (`schedules` db) and their index keys (in `index`):
 *   schedulesByFleet/<fleetId>/<createdAt 16 hex>/<scheduleId>  every schedule, listing order
 *   schedulesByTemplate/<missionId>/<scheduleId>                while a non-cancelled schedule
 *                                                               references the template and still
 *                                                               has a fire to come or one open
 *   activeSchedules/<fleetId>/<scheduleId>                      while not cancelled (counted by key,
 *                                                               without decoding records)
 * Plus the keyset behind `GET /v1/mission-schedule`. Nobody else builds these keys.
 */
import { randomUUID } from 'node:crypto';
import { apiError } from '../../errors/catalog.js';
import { nextFireAfter } from './recurrence.js';
import { countPrefix, firstIndexed, keyPrefix, lastSegment, prefixRange } from '../../store/keys.js';
import { keysetOver, type Keyset } from '../../store/keyset.js';
import type { Store } from '../../store/lmdb.js';
import type { FireRecord, ScheduleRecord, ScheduleSpec } from './records.js';
import { ACTIVE, activeKey, BY_FLEET, BY_TEMPLATE, fleetKey, templateKey } from './keys.js';

/** Deployment window used when a request gives none (documented in OpenAPI). */
export const DEFAULT_DEPLOYMENT_DEADLINE_MS = 300_000;
export const DEFAULT_RETRY_INTERVAL_SECS = 30;
/** Active (non-cancelled) schedules per fleet; a create beyond it is refused (409). */
export const MAX_ACTIVE_SCHEDULES_PER_FLEET = 20_000;

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
  return countPrefix(store.index, keyPrefix(ACTIVE, fleetId));
}

/** How many schedules the fleet has ever had, cancelled included (counted by key, nothing decoded). */
export function countFleetSchedules(store: Store, fleetId: string): number {
  return countPrefix(store.index, keyPrefix(BY_FLEET, fleetId));
}

/** The fleet's non-cancelled schedules (the `activeSchedules` index: cancelled ones are not read). */
export function activeSchedulesOf(store: Store, fleetId: string): ScheduleRecord[] {
  const out: ScheduleRecord[] = [];
  for (const key of store.index.getKeys(prefixRange(keyPrefix(ACTIVE, fleetId)))) {
    const s = store.schedules.get(lastSegment(key));
    if (s && !s.cancelled && s.fleetId === fleetId) out.push(s);
  }
  return out;
}

/** A non-cancelled schedule that still references the template, if any (template delete checks it). */
export function scheduleUsingTemplate(store: Store, missionId: string): string | undefined {
  return firstIndexed(store, `${BY_TEMPLATE}/${missionId}`);
}

/**
 * A fleet's schedules (mission and command, cancelled too), newest first, as a keyset; `where`
 * skips the schedules a list's filters refuse.
 */
export function schedulesOf(store: Store, fleetId: string, where?: (s: ScheduleRecord) => boolean): Keyset<ScheduleRecord> {
  return keysetOver(store.index, { prefix: keyPrefix(BY_FLEET, fleetId), reverse: true }, (key) => {
    const s = store.schedules.get(lastSegment(key));
    return s && s.fleetId === fleetId && (where === undefined || where(s)) ? s : undefined;
  });
}

/**
 * The correlation id of the fleet's schedule `scheduleId`, or undefined when it names no schedule of
 * the fleet: `GET /v1/events?correlation_id=<scheduleId>` reads that schedule's timeline.
 */
export function scheduleCorrelationId(store: Store, fleetId: string, scheduleId: string): string | undefined {
  const s = store.schedules.get(scheduleId);
  return s !== undefined && s.fleetId === fleetId ? s.correlationId : undefined;
}

/** A schedule of the fleet. @throws ApiError `schedule_not_found` */
export function requireSchedule(store: Store, fleetId: string, scheduleId: string): ScheduleRecord {
  const s = store.schedules.get(scheduleId);
  if (!s || s.fleetId !== fleetId) throw apiError('schedule_not_found', { scheduleId });
  return s;
}

/** The schedule `scheduleId` (any fleet), or undefined. */
export function scheduleRecord(store: Pick<Store, 'schedules'>, scheduleId: string): ScheduleRecord | undefined {
  return store.schedules.get(scheduleId);
}

/** The stored fire `fireKey`, or undefined. */
export function fireRecord(store: Pick<Store, 'fires'>, fireKey: string): FireRecord | undefined {
  return store.fires.get(fireKey);
}
