/**
 * The alert lifecycle: raise a condition (opens an alert, or counts a repeat on the unresolved one),
 * clear it (resolves), acknowledge (a person). One unresolved alert per (fleet, kind, condition key),
 * kept in memory and rebuilt from LMDB at start, so two raises in one turn never open two alerts.
 *
 * Every change is written to LMDB (asynchronous; `acknowledge` resolves once committed), appended to
 * the correlated event log (`alert.opened`, `alert.acknowledged`, `alert.resolved`) and handed to the
 * observers (the live stream). The sources that raise and clear are in ./sources; none of them does
 * I/O on a hot path (docs/alerts.md, "How late an alert can be").
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { pino } from 'pino';
import { apiError } from '../../../errors/catalog.js';
import type { EventLog } from '../../../events/log.js';
import type { Store } from '../../../store/lmdb.js';
import { alertOf, putChangedAlert, putNewAlert, unresolvedAlerts } from './alert-store.js';
import type { AlertActor, AlertKind, AlertRecord, AlertResolution, AlertSeverity, AlertSubject } from './records.js';
import { cachedFleet } from '../../../store/identity-reads.js';

/** A condition as a source reports it. */
export interface AlertCondition {
  kind: AlertKind;
  fleetId: string;
  /** The subject's id, or for faults `<robotId>/<code>`: one unresolved alert per (fleet, kind, key). */
  conditionKey: string;
  subject: AlertSubject;
  robotId: string | null;
  severity: AlertSeverity;
  message: string;
  details: Record<string, unknown>;
  /** When the condition was seen (gateway clock); default now. */
  atMs?: number;
  /** The timeline its events go on; default: the robot id, else the alert id. */
  correlationId?: string;
}

/** Told of every alert opened or changed (after the change is queued for writing); must not throw. */
export type AlertObserver = (alert: Readonly<AlertRecord>, change: AlertChange) => void;
export type AlertChange = 'opened' | 'repeated' | 'acknowledged' | 'resolved';

export interface AlertServiceOptions {
  store: Store;
  events: EventLog;
  now?: () => number;
  log?: Logger;
  /** Unresolved alerts per fleet; past it a new condition is logged, not opened (default 10,000). */
  maxUnresolvedPerFleet?: number;
}

export const DEFAULT_MAX_UNRESOLVED_PER_FLEET = 10_000;
/** A repeat of an unresolved alert is written at most this often (the count is kept in memory meanwhile). */
const REPEAT_WRITE_MS = 1_000;

const conditionId = (fleetId: string, kind: AlertKind, key: string): string => `${fleetId}/${kind}/${key}`;

export class AlertService {
  private readonly store: Store;
  private readonly events: EventLog;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly maxPerFleet: number;
  /** condition id -> its unresolved alert (the live record: changes are made here, then written). */
  private readonly unresolved = new Map<string, AlertRecord>();
  private readonly byId = new Map<string, AlertRecord>();
  /** Resolved alerts whose write has not committed yet (so a read right after a resolve sees it resolved). */
  private readonly resolving = new Map<string, AlertRecord>();
  private readonly perFleet = new Map<string, number>();
  private readonly observers = new Set<AlertObserver>();
  private lastOverflowLogMs = 0;
  private lastWrite: Promise<unknown> = Promise.resolve();

  constructor(opts: AlertServiceOptions) {
    this.store = opts.store;
    this.events = opts.events;
    this.now = opts.now ?? ((): number => Date.now());
    this.log = opts.log ?? pino({ enabled: false });
    this.maxPerFleet = opts.maxUnresolvedPerFleet ?? DEFAULT_MAX_UNRESOLVED_PER_FLEET;
    for (const a of unresolvedAlerts(this.store)) this.track(a);
  }

  /** Registers an observer of opened and changed alerts; returns its removal. */
  observe(fn: AlertObserver): () => void {
    this.observers.add(fn);
    return () => this.observers.delete(fn);
  }

  /** The unresolved alerts (open or acknowledged), optionally of one kind: what start-up reconciliation walks. */
  unresolvedOf(kind?: AlertKind): AlertRecord[] {
    return [...this.unresolved.values()].filter((a) => kind === undefined || a.kind === kind);
  }

  /** How many alerts are open or acknowledged (all fleets). */
  get unresolvedCount(): number {
    return this.unresolved.size;
  }

  /** The unresolved alert of a condition, if any. */
  find(fleetId: string, kind: AlertKind, conditionKey: string): Readonly<AlertRecord> | undefined {
    return this.unresolved.get(conditionId(fleetId, kind, conditionKey));
  }

  /** The in-memory record of an alert that is unresolved or whose resolution is still being written, else undefined. */
  live(alertId: string): Readonly<AlertRecord> | undefined {
    return this.byId.get(alertId) ?? this.resolving.get(alertId);
  }

  /** An alert of a fleet: the live record while unresolved, else the stored one. */
  get(fleetId: string, alertId: string): Readonly<AlertRecord> | undefined {
    const live = this.byId.get(alertId);
    if (live !== undefined) return live.fleetId === fleetId ? live : undefined;
    const resolved = this.resolving.get(alertId);
    if (resolved !== undefined) return resolved.fleetId === fleetId ? resolved : undefined;
    return alertOf(this.store, fleetId, alertId);
  }

  /**
   * The condition holds: opens an alert, or counts a repeat on the unresolved one (which keeps its
   * state: an acknowledged alert stays acknowledged). Returns the alert, or null when the fleet is at
   * its bound of unresolved alerts or unknown.
   */
  raise(c: AlertCondition): Readonly<AlertRecord> | null {
    const at = c.atMs ?? this.now();
    const id = conditionId(c.fleetId, c.kind, c.conditionKey);
    const existing = this.unresolved.get(id);
    if (existing !== undefined) {
      existing.occurrences += 1;
      existing.lastRaisedAtMs = at;
      existing.message = c.message;
      existing.details = c.details;
      if (rank(c.severity) > rank(existing.severity)) existing.severity = c.severity;
      // Bursts of repeats (a flapping condition) are counted in memory and written at most once a second.
      if (at - existing.updatedAtMs >= REPEAT_WRITE_MS) void this.write(existing, at, 'repeated');
      return existing;
    }
    const fleet = cachedFleet(this.store, c.fleetId);
    if (fleet === undefined) return null;
    if ((this.perFleet.get(c.fleetId) ?? 0) >= this.maxPerFleet) {
      if (at - this.lastOverflowLogMs >= 60_000) {
        this.lastOverflowLogMs = at;
        this.log.error({ fleetId: c.fleetId, kind: c.kind, max: this.maxPerFleet }, `fleet ${c.fleetId} has ${this.maxPerFleet} unresolved alerts: new conditions are not opened until some resolve`);
      }
      return null;
    }
    const alertId = randomUUID();
    const a: AlertRecord = {
      alertId,
      orgId: fleet.orgId,
      fleetId: c.fleetId,
      kind: c.kind,
      conditionKey: c.conditionKey,
      subject: { ...c.subject },
      robotId: c.robotId,
      severity: c.severity,
      state: 'open',
      message: c.message,
      details: c.details,
      occurrences: 1,
      openedAtMs: at,
      lastRaisedAtMs: at,
      acknowledgedAtMs: null,
      acknowledgedBy: null,
      acknowledgeNote: null,
      resolvedAtMs: null,
      resolution: null,
      correlationId: c.correlationId ?? c.robotId ?? alertId,
      updatedAtMs: at,
    };
    this.track(a);
    void this.logged(putNewAlert(this.store, a), a);
    this.event(a, at, 'alert.opened', { severity: a.severity, message: a.message, details: a.details });
    this.notify(a, 'opened');
    return a;
  }

  /** The condition cleared: resolves its unresolved alert, if any. */
  clear(fleetId: string, kind: AlertKind, conditionKey: string, resolution: AlertResolution = 'condition_cleared', atMs?: number): Readonly<AlertRecord> | null {
    const a = this.unresolved.get(conditionId(fleetId, kind, conditionKey));
    return a === undefined ? null : this.resolve(a, resolution, atMs ?? this.now());
  }

  /** Resolves an unresolved alert (a source that walks {@link unresolvedOf} uses this). */
  resolve(alert: Readonly<AlertRecord>, resolution: AlertResolution, atMs = this.now()): Readonly<AlertRecord> | null {
    const a = this.unresolved.get(conditionId(alert.fleetId, alert.kind, alert.conditionKey));
    if (a === undefined || a.alertId !== alert.alertId) return null;
    this.untrack(a);
    a.state = 'resolved';
    a.resolvedAtMs = atMs;
    a.resolution = resolution;
    this.resolving.set(a.alertId, a);
    const written = this.write(a, atMs, 'resolved', { resolution, occurrences: a.occurrences });
    const done = (): void => void this.resolving.delete(a.alertId);
    written.then(done, done);
    return a;
  }

  /**
   * A person acknowledges an alert. Already acknowledged: unchanged (the first acknowledgement is
   * kept). Resolves once the change is committed.
   * @throws ApiError `alert_not_found` (also another fleet's), `alert_resolved`
   */
  async acknowledge(fleetId: string, alertId: string, by: AlertActor, note: string | null): Promise<Readonly<AlertRecord>> {
    const live = this.byId.get(alertId);
    if (live === undefined || live.fleetId !== fleetId) {
      const stored = this.get(fleetId, alertId);
      if (stored === undefined) throw apiError('alert_not_found', { alertId });
      throw apiError('alert_resolved', { alertId });
    }
    if (live.state === 'acknowledged') {
      await this.lastWrite;
      return live;
    }
    const at = this.now();
    live.state = 'acknowledged';
    live.acknowledgedAtMs = at;
    live.acknowledgedBy = { ...by };
    live.acknowledgeNote = note;
    const written = this.write(live, at, 'acknowledged', { by: { ...by }, ...(note !== null ? { note } : {}) });
    await written;
    return live;
  }

  /** Resolves when every change made so far is committed. */
  async flushed(): Promise<void> {
    await this.lastWrite;
  }

  private write(a: AlertRecord, at: number, change: Exclude<AlertChange, 'opened'>, eventData?: Record<string, unknown>): Promise<unknown> {
    a.updatedAtMs = at;
    const written = this.logged(putChangedAlert(this.store, a), a);
    if (change !== 'repeated') this.event(a, at, `alert.${change}`, eventData ?? {});
    this.notify(a, change);
    return written;
  }

  /**
   * Makes `p` the latest write and logs its failure (so no rejection goes unhandled); whoever awaits
   * `p` itself (an acknowledgement) still sees the failure.
   */
  private logged(p: Promise<unknown>, a: AlertRecord): Promise<unknown> {
    this.lastWrite = p.catch((err: unknown) => this.log.error({ err, alertId: a.alertId }, 'alerts: writing an alert failed'));
    return p;
  }

  private event(a: AlertRecord, at: number, kind: string, data: Record<string, unknown>): void {
    this.events.append({
      fleetId: a.fleetId,
      correlationId: a.correlationId,
      atMs: at,
      kind,
      subject: { type: 'alert', id: a.alertId },
      data: { alertKind: a.kind, about: { ...a.subject }, ...data },
    });
  }

  private notify(a: AlertRecord, change: AlertChange): void {
    for (const fn of this.observers) {
      try {
        fn(a, change);
      } catch (err) {
        this.log.error({ err, alertId: a.alertId }, 'an alert observer failed');
      }
    }
  }

  private track(a: AlertRecord): void {
    this.unresolved.set(conditionId(a.fleetId, a.kind, a.conditionKey), a);
    this.byId.set(a.alertId, a);
    this.perFleet.set(a.fleetId, (this.perFleet.get(a.fleetId) ?? 0) + 1);
  }

  private untrack(a: AlertRecord): void {
    this.unresolved.delete(conditionId(a.fleetId, a.kind, a.conditionKey));
    this.byId.delete(a.alertId);
    const n = (this.perFleet.get(a.fleetId) ?? 1) - 1;
    if (n > 0) this.perFleet.set(a.fleetId, n);
    else this.perFleet.delete(a.fleetId);
  }
}

function rank(s: AlertSeverity): number {
  return s === 'critical' ? 2 : s === 'error' ? 1 : 0;
}
