/**
 * Turns each robot's full fault list (from its health report) into fault records: a code that was
 * not active is raised (a new record), a code still listed updates its record only when severity,
 * component or message changed (repeats are deduplicated), and an active code no longer listed is
 * cleared. One record per (robot, code) is active at a time. docs/faults.md.
 *
 * The active records of each robot are kept in memory (loaded from LMDB at a robot's first report
 * after start), so two reports in quick succession are diffed against each other even before the
 * first one's write committed. Writes are one asynchronous LMDB transaction per report, in call order.
 * Memory: the active faults of robots that reported (at most MAX_FAULTS_PER_REPORT per robot).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { EventLog } from '../../../events/log.js';
import type { Store } from '../../../store/lmdb.js';
import { activeFaultsOfRobot, putFaultSync, putNewFaultSync } from './faults.js';
import { faultNotice, type FaultObserver } from './observer.js';
import type { FaultRecord, FaultSeverity } from './records.js';
import { cachedRobot } from '../../../store/identity-reads.js';

/** Faults beyond this many in one report are ignored (and logged): a robot cannot flood the store. */
export const MAX_FAULTS_PER_REPORT = 64;

/** One fault as a robot reports it (already bounded by the health intake). */
export interface ReportedFault {
  code: string;
  severity: FaultSeverity;
  component: string;
  message: string;
  /** The robot's raise time (robot clock), or null. */
  robotRaisedAtMs: number | null;
}

export interface FaultTrackerOptions {
  /** Gateway clock (default Date.now). */
  now?: () => number;
  log?: Logger;
}

type Change =
  | { kind: 'raised'; after: FaultRecord }
  | { kind: 'updated'; after: FaultRecord; previous: FaultSeverity }
  | { kind: 'cleared'; after: FaultRecord };

export class FaultTracker {
  private readonly active = new Map<string, Map<string, FaultRecord>>();
  private readonly observers = new Set<FaultObserver>();
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly events: EventLog,
    private readonly opts: FaultTrackerOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Adds an observer (alerts); returns the function that removes it. */
  observe(observer: FaultObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  /** The robot's active faults (memory, after its first report; else LMDB). */
  activeOf(robotId: string): FaultRecord[] {
    return [...this.activeMap(robotId).values()];
  }

  /**
   * Applies a robot's full list of active faults (one health report). Unknown robots are ignored.
   * Returns what changed, for tests and logs.
   */
  apply(robotId: string, reported: readonly ReportedFault[]): Change[] {
    const robot = cachedRobot(this.store, robotId);
    if (robot === undefined) return [];
    const now = this.now();
    const current = this.activeMap(robotId);
    const changes: Change[] = [];
    const clear = (f: FaultRecord, by: 'robot_report' | 'robot_transferred'): void => {
      current.delete(f.code);
      changes.push({ kind: 'cleared', after: { ...f, state: 'cleared', clearedAtMs: now, clearedBy: by } });
    };
    if (reported.length > MAX_FAULTS_PER_REPORT) {
      this.opts.log?.warn({ robotId, faults: reported.length, max: MAX_FAULTS_PER_REPORT }, 'robot health report lists too many faults; the rest are ignored');
    }
    const seen = new Set<string>();
    for (const r of reported.slice(0, MAX_FAULTS_PER_REPORT)) {
      if (seen.has(r.code)) continue;
      seen.add(r.code);
      let existing = current.get(r.code);
      // A robot moved to another fleet: its faults there start afresh.
      if (existing !== undefined && existing.fleetId !== robot.fleetId) {
        clear(existing, 'robot_transferred');
        existing = undefined;
      }
      if (existing === undefined) {
        const f: FaultRecord = {
          faultId: randomUUID(),
          orgId: robot.orgId,
          fleetId: robot.fleetId,
          robotId,
          code: r.code,
          severity: r.severity,
          component: r.component,
          message: r.message,
          state: 'active',
          raisedAtMs: now,
          robotRaisedAtMs: r.robotRaisedAtMs,
          clearedAtMs: null,
          updatedAtMs: now,
          clearedBy: null,
        };
        current.set(r.code, f);
        changes.push({ kind: 'raised', after: f });
      } else if (existing.severity !== r.severity || existing.component !== r.component || existing.message !== r.message) {
        const f: FaultRecord = { ...existing, severity: r.severity, component: r.component, message: r.message, updatedAtMs: now };
        current.set(r.code, f);
        changes.push({ kind: 'updated', after: f, previous: existing.severity });
      }
    }
    for (const f of [...current.values()]) if (!seen.has(f.code)) clear(f, 'robot_report');
    if (changes.length === 0) return changes;
    this.write(changes);
    for (const c of changes) this.announce(c);
    return changes;
  }

  private activeMap(robotId: string): Map<string, FaultRecord> {
    let m = this.active.get(robotId);
    if (m === undefined) {
      m = new Map(activeFaultsOfRobot(this.store, robotId).map((f) => [f.code, f]));
      this.active.set(robotId, m);
    }
    return m;
  }

  private write(changes: readonly Change[]): void {
    const { store } = this;
    store.root.transaction(() => {
      for (const c of changes) {
        if (c.kind === 'raised') putNewFaultSync(store, c.after);
        else putFaultSync(store, c.after);
      }
    }).catch((err: unknown) => this.opts.log?.error({ err }, 'fault records could not be written'));
  }

  private announce(c: Change): void {
    const f = c.after;
    const at = c.kind === 'cleared' ? f.clearedAtMs ?? f.updatedAtMs : c.kind === 'raised' ? f.raisedAtMs : f.updatedAtMs;
    this.events.append({
      fleetId: f.fleetId,
      correlationId: f.robotId,
      atMs: at,
      kind: `fault.${c.kind}`,
      subject: { type: 'robot', id: f.robotId },
      data: {
        faultId: f.faultId, code: f.code, severity: f.severity, component: f.component, message: f.message,
        ...(c.kind === 'updated' ? { previousSeverity: c.previous } : {}),
        ...(c.kind === 'cleared' ? { clearedBy: f.clearedBy } : {}),
      },
    });
    const notice = faultNotice(f);
    for (const o of this.observers) {
      try {
        if (c.kind === 'raised') o.raised(notice);
        else if (c.kind === 'cleared') o.cleared(notice);
        else o.updated?.(notice, c.previous);
      } catch (err) {
        this.opts.log?.error({ err, faultId: f.faultId }, 'a fault observer failed');
      }
    }
  }
}
