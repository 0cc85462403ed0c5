/**
 * The durable scheduler: keeps every active schedule's next due time in a timer heap and, when one
 * falls due, commits the occurrence (a {@link FireRecord}) and the schedule's advanced next due time
 * in ONE LMDB transaction before anything acts on it.
 *
 * Guarantees:
 * - Nothing accepted is lost: schedules are written by their creators before the API answers; the
 *   heap is rebuilt from LMDB at start.
 * - No fire runs twice: a fire's key is `<scheduleId>/<dueAtMs>` and the same transaction moves
 *   `nextFireAtMs` past it, so after a crash either both happened or neither did. Handlers receive a
 *   fire only after its commit.
 * - At most one open fire per schedule: an occurrence that falls due while the previous one is still
 *   looking for a robot (or waiting for its ack) is counted in `skippedFires` and not worked on, so
 *   the work queued never exceeds the number of schedules. Such a skip is kept in memory and written
 *   with the schedule's next write (its next fire): it runs nothing, so a crash can lose only the
 *   counter; after a restart the stored `nextFireAtMs` may lie behind and the misfire policy below
 *   covers the gap (still at most one fire per occurrence: fire keys are unique). This keeps a
 *   1-second schedule behind a long run from costing a write per second.
 *
 * Misfire policy (occurrences that fell due while the gateway was down), applied once at start:
 * the occurrences are coalesced: only the LATEST missed one fires, late, and only if its deployment
 * window (dueAt + deployment_deadline_ms) is still open; every other missed occurrence is counted
 * as skipped. A `once` schedule whose window closed while the gateway was down is marked `failed`
 * with reason `missed`. Then the schedule is armed at its next occurrence after now.
 *
 * Batching: all occurrences due in one timer turn (up to {@link SchedulerOptions.maxFiresPerCommit})
 * share one transaction, and up to MAX_COMMITS_IN_FLIGHT transactions are pipelined, which is what
 * keeps lateness flat with thousands of schedules (bench/README.md#scheduler).
 */
import { pino, type Logger } from 'pino';
import type { FireRecord, ScheduleRecord } from './records.js';
import { fireKeyOf } from './keys.js';
import { syncTemplateRef } from './schedules.js';
import { sortableNumber } from '../../store/keys.js';
import type { Store } from '../../store/lmdb.js';
import type { Clock } from '../clock.js';
import { nextFireAfter } from './recurrence.js';
import { TimerHeap } from './timer-heap.js';

/**
 * How retention walks the `fires` db: keys grouped by schedule (`<scheduleId>/`), due-time ordered
 * inside a group; `dueBefore` is the exclusive bound of a group's fires due before `ms`.
 */
export const FIRE_KEYS = {
  groupOf: (key: string): string | null => {
    const i = key.indexOf('/');
    return i < 0 ? null : key.slice(0, i + 1);
  },
  dueBefore: (group: string, ms: number): string => {
    return `${group}${sortableNumber(ms)}`;
  },
} as const;

/** What happened to one due occurrence, reported after its transaction committed. */
export type FireOutcome =
  | { kind: 'fired'; fire: FireRecord; schedule: ScheduleRecord }
  | { kind: 'skipped'; schedule: ScheduleRecord; dueAtMs: number; reason: 'previous_open' | 'missed' }
  | { kind: 'missed_failed'; schedule: ScheduleRecord; dueAtMs: number };

export interface SchedulerOptions {
  store: Store;
  clock: Clock;
  /** Called once per outcome, after commit, in due order. */
  onOutcome(o: FireOutcome): void;
  /** Occurrences committed per transaction at most (default 5000); the rest follow at once. */
  maxFiresPerCommit?: number;
  log?: Logger;
  /** Told the lateness (commit time - due time, ms) of each occurrence, fired or skipped (metrics). */
  onLateness?: (outcome: 'fired' | 'skipped', ms: number) => void;
}

export interface SchedulerStats {
  armed: number;
  fired: number;
  skipped: number;
  /** Lateness (commit time - due time, ms) of recent occurrences (fired or skipped), newest last; bounded ring. */
  recentLatenessMs: number[];
  /** Lateness of recent fired occurrences only (due -> their fire committed). */
  recentFiredLatenessMs: number[];
  /** Duration (ms) of recent fire transactions, from the start of the batch to its commit. */
  recentCommitMs: number[];
}

const LATENESS_RING = 100_000;
/** Fire transactions allowed in flight at once (each holds at most maxFiresPerCommit occurrences). */
const MAX_COMMITS_IN_FLIGHT = 8;

export class Scheduler {
  private readonly heap = new TimerHeap();
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly maxBatch: number;
  private readonly log: Logger;
  private cancelTimer: (() => void) | null = null;
  private timerAt: number | null = null;
  private inFlight = 0;
  /** The due time each schedule is armed at; a popped occurrence whose time no longer matches was edited. */
  private readonly expected = new Map<string, number>();
  /** Skips not yet written (see the class comment): merged into the schedule's next write. */
  private readonly unsaved = new Map<string, { skipped: number; next: number | null }>();
  private stopped = true;
  private fired = 0;
  private skipped = 0;
  private lateness: number[] = [];
  private commits: number[] = [];
  private firedLateness: number[] = [];

  constructor(private readonly opts: SchedulerOptions) {
    this.store = opts.store;
    this.clock = opts.clock;
    this.maxBatch = opts.maxFiresPerCommit ?? 5000;
    this.log = opts.log ?? pino({ enabled: false });
  }

  /** Loads every active schedule, applies the misfire policy, and starts the timer. */
  async start(): Promise<void> {
    this.stopped = false;
    const now = this.clock.now();
    const missed: ScheduleRecord[] = [];
    for (const { value: s } of this.store.schedules.getRange()) {
      if (s.cancelled || s.nextFireAtMs === null) continue;
      if (s.nextFireAtMs < now) missed.push(s);
      else this.armAt(s.scheduleId, s.nextFireAtMs);
    }
    if (missed.length > 0) await this.applyMisfires(missed, now);
    this.rearm();
  }

  /** True between start() and stop(). */
  get running(): boolean {
    return !this.stopped;
  }

  /** Stops the timer; a commit in flight finishes. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.timerAt = null;
  }

  /** (Re)arms a schedule after it was created or edited (already committed by the caller). */
  arm(s: ScheduleRecord): void {
    this.unsaved.delete(s.scheduleId);
    if (s.cancelled || s.nextFireAtMs === null) this.disarm(s.scheduleId);
    else this.armAt(s.scheduleId, s.nextFireAtMs);
    this.rearm();
  }

  disarm(scheduleId: string): void {
    this.heap.disarm(scheduleId);
    this.expected.delete(scheduleId);
    this.unsaved.delete(scheduleId);
  }

  /**
   * The schedule as the scheduler knows it now: `nextFireAtMs` and the skip counters include skips
   * not yet written. Reads (GET /v1/mission-schedule, runtime status) show this view.
   */
  liveView(s: ScheduleRecord): ScheduleRecord {
    const u = this.unsaved.get(s.scheduleId);
    if (!u) return s;
    return { ...s, nextFireAtMs: u.next, skippedFires: s.skippedFires + u.skipped, firesTotal: s.firesTotal + u.skipped };
  }

  private armAt(scheduleId: string, at: number): void {
    this.expected.set(scheduleId, at);
    this.heap.arm(scheduleId, at);
  }

  /** Next due time of a schedule as armed, or undefined. */
  armedAt(scheduleId: string): number | undefined {
    return this.heap.dueOf(scheduleId);
  }

  stats(): SchedulerStats {
    return { armed: this.heap.size, fired: this.fired, skipped: this.skipped, recentLatenessMs: [...this.lateness], recentFiredLatenessMs: [...this.firedLateness], recentCommitMs: [...this.commits] };
  }

  /** Clears the lateness ring (benchmarks measure one window). */
  resetLateness(): void {
    this.lateness = [];
    this.commits = [];
    this.firedLateness = [];
  }

  private rearm(): void {
    // At the in-flight bound the timer waits: the next commit to land re-arms it.
    if (this.stopped || this.inFlight >= MAX_COMMITS_IN_FLIGHT) return;
    const at = this.heap.peekAt();
    if (at === null) {
      this.cancelTimer?.();
      this.cancelTimer = null;
      this.timerAt = null;
      return;
    }
    if (this.timerAt === at) return;
    this.cancelTimer?.();
    this.timerAt = at;
    this.cancelTimer = this.clock.setTimer(() => {
      this.cancelTimer = null;
      this.timerAt = null;
      this.tick();
    }, at - this.clock.now());
  }

  /**
   * Commits what is due. Batches are pipelined (a new one does not wait for the previous commit;
   * lmdb-js commits them in order, often in the same write transaction), so one slow commit does
   * not add its time to every occurrence queued behind it. A schedule is never in two batches: it
   * leaves the heap when popped and is re-armed only after its commit. A failed commit puts its
   * occurrences back after a second (the schedules were not advanced, so nothing is lost or doubled).
   */
  private tick(): void {
    while (!this.stopped && this.inFlight < MAX_COMMITS_IN_FLIGHT) {
      const due = this.heap.popDue(this.clock.now(), this.maxBatch);
      if (due.length === 0) break;
      this.inFlight++;
      this.commitDue(due).then(
        () => this.landed(),
        (err: unknown) => {
          this.log.error({ err, fires: due.length }, 'scheduler: commit failed, retrying in 1 s');
          this.clock.setTimer(() => {
            for (const d of due) if (this.heap.dueOf(d.key) === undefined && this.expected.get(d.key) === d.at) this.heap.arm(d.key, d.at);
            this.rearm();
          }, 1000);
          this.landed();
        },
      );
    }
    this.rearm();
  }

  private landed(): void {
    this.inFlight--;
    if (this.heap.peekAt() !== null && (this.heap.peekAt() ?? 0) <= this.clock.now()) this.tick();
    else this.rearm();
  }

  /**
   * A batch of due occurrences. An occurrence whose schedule still has an open fire is skipped in
   * memory (no write: the skip changes nothing that must survive a crash, see the class comment);
   * the others are committed in one transaction and reported after it.
   */
  private async commitDue(due: { key: string; at: number }[]): Promise<void> {
    const outcomes: FireOutcome[] = [];
    const nowAtStart = this.clock.now();
    const toWrite: { key: string; at: number }[] = [];
    for (const d of due) {
      const s = this.store.schedules.get(d.key);
      // Edited or cancelled since it was armed: the edit re-armed it at its own time.
      if (!s || s.cancelled || this.expected.get(d.key) !== d.at) continue;
      if (s.openFireKey === null) {
        toWrite.push(d);
        continue;
      }
      const next = nextAfter(s, d.at);
      const u = this.unsaved.get(d.key) ?? { skipped: 0, next };
      u.skipped += 1;
      u.next = next;
      this.unsaved.set(d.key, u);
      this.skipped++;
      this.sample(this.lateness, nowAtStart - d.at);
      this.opts.onLateness?.('skipped', nowAtStart - d.at);
      if (next !== null) this.armAt(d.key, next);
      else this.expected.delete(d.key);
      outcomes.push({ kind: 'skipped', schedule: this.liveView(s), dueAtMs: d.at, reason: 'previous_open' });
    }
    if (toWrite.length > 0) {
      const written: FireOutcome[] = [];
      await this.store.root.transaction(() => {
        for (const { key: scheduleId, at } of toWrite) {
          const s = this.store.schedules.get(scheduleId);
          if (!s || s.cancelled || this.expected.get(scheduleId) !== at) continue;
          written.push(this.fireIn(this.liveView(s), at, nowAtStart, nextAfter(s, at)));
        }
      });
      const committedAt = this.clock.now();
      this.sample(this.commits, committedAt - nowAtStart);
      for (const o of written) {
        const id = o.schedule.scheduleId;
        const at = o.kind === 'fired' ? o.fire.dueAtMs : o.dueAtMs;
        if (o.kind === 'fired') {
          this.fired++;
          this.sample(this.firedLateness, committedAt - at);
        } else this.skipped++;
        this.sample(this.lateness, committedAt - at);
        this.opts.onLateness?.(o.kind === 'fired' ? 'fired' : 'skipped', committedAt - at);
        this.unsaved.delete(id);
        // Only if nothing re-armed it meanwhile (an edit during the commit wins).
        if (this.expected.get(id) === at) {
          if (o.schedule.nextFireAtMs !== null) this.armAt(id, o.schedule.nextFireAtMs);
          else this.expected.delete(id);
        }
      }
      outcomes.push(...written);
    }
    for (const o of outcomes) this.report(o);
  }

  private sample(ring: number[], v: number): void {
    ring.push(v);
    if (ring.length > LATENESS_RING) ring.splice(0, ring.length - LATENESS_RING);
  }

  /** Inside a transaction: writes the occurrence (or its skip) and advances the schedule. */
  private fireIn(s: ScheduleRecord, dueAtMs: number, nowMs: number, next: number | null): FireOutcome {
    const updated: ScheduleRecord = { ...s, nextFireAtMs: next, firesTotal: s.firesTotal + 1, updatedAtMs: nowMs };
    if (s.openFireKey !== null) {
      updated.skippedFires = s.skippedFires + 1;
      this.store.schedules.putSync(s.scheduleId, updated);
      syncTemplateRef(this.store, updated);
      return { kind: 'skipped', schedule: updated, dueAtMs, reason: 'previous_open' };
    }
    const fireKey = fireKeyOf(s.scheduleId, dueAtMs);
    if (this.store.fires.get(fireKey) !== undefined) {
      // Defensive: the occurrence is already recorded, so it must not run again.
      this.store.schedules.putSync(s.scheduleId, { ...s, nextFireAtMs: next });
      return { kind: 'skipped', schedule: { ...s, nextFireAtMs: next }, dueAtMs, reason: 'previous_open' };
    }
    const fire: FireRecord = {
      fireKey,
      scheduleId: s.scheduleId,
      orgId: s.orgId,
      fleetId: s.fleetId,
      dueAtMs,
      firedAtMs: nowMs,
      phase: 'selecting',
      attempt: 0,
      attemptDeadlineMs: s.deploymentDeadlineMs === null ? null : dueAtMs + s.deploymentDeadlineMs,
      retryAtMs: null,
      robotId: null,
      runId: null,
      commandIds: [],
      failureReason: null,
      failureDetail: null,
      endedAtMs: null,
    };
    updated.openFireKey = fireKey;
    updated.status = 'pending';
    this.store.fires.putSync(fireKey, fire);
    this.store.schedules.putSync(s.scheduleId, updated);
    syncTemplateRef(this.store, updated);
    return { kind: 'fired', fire, schedule: updated };
  }

  private async applyMisfires(missed: ScheduleRecord[], now: number): Promise<void> {
    const outcomes: FireOutcome[] = [];
    await this.store.root.transaction(() => {
      for (const s0 of missed) {
        const s = this.store.schedules.get(s0.scheduleId);
        if (!s || s.cancelled || s.nextFireAtMs === null || s.nextFireAtMs >= now) continue;
        const { latest, count } = missedOccurrences(s, now);
        const next = nextAfter(s, now);
        const windowOpen = s.deploymentDeadlineMs === null || latest + s.deploymentDeadlineMs > now;
        const older = count - 1;
        const base: ScheduleRecord = { ...s, skippedFires: s.skippedFires + older, firesTotal: s.firesTotal + older };
        if (windowOpen) {
          if (older > 0) outcomes.push({ kind: 'skipped', schedule: base, dueAtMs: s.nextFireAtMs, reason: 'missed' });
          outcomes.push(this.fireIn({ ...base, nextFireAtMs: latest }, latest, now, next));
          continue;
        }
        const updated: ScheduleRecord = { ...base, skippedFires: base.skippedFires + 1, firesTotal: base.firesTotal + 1, nextFireAtMs: next, updatedAtMs: now };
        if (next === null && updated.openFireKey === null) {
          updated.status = 'failed';
          updated.lastFailureReason = 'missed';
          updated.lastFailureDetail = `fell due at ${new Date(latest).toISOString()} while the gateway was down; its deployment window closed before it restarted`;
          outcomes.push({ kind: 'missed_failed', schedule: updated, dueAtMs: latest });
        } else {
          outcomes.push({ kind: 'skipped', schedule: updated, dueAtMs: latest, reason: 'missed' });
        }
        this.store.schedules.putSync(s.scheduleId, updated);
        syncTemplateRef(this.store, updated);
      }
    });
    for (const o of outcomes) {
      if (o.kind === 'fired') this.fired++;
      else this.skipped++;
      if (o.schedule.nextFireAtMs !== null) this.armAt(o.schedule.scheduleId, o.schedule.nextFireAtMs);
    }
    if (outcomes.length > 0) this.log.warn({ schedules: missed.length }, `scheduler: misfire policy applied to ${missed.length} schedule(s)`);
    for (const o of outcomes) this.report(o);
  }

  private report(o: FireOutcome): void {
    try {
      this.opts.onOutcome(o);
    } catch (err) {
      this.log.error({ err }, 'scheduler: fire handler failed');
    }
  }
}

function nextAfter(s: ScheduleRecord, afterMs: number): number | null {
  return s.schedule === null ? null : nextFireAfter(s.schedule, afterMs);
}

/** The latest occurrence at or before `now` (from nextFireAtMs on) and how many there were. */
function missedOccurrences(s: ScheduleRecord, now: number): { latest: number; count: number } {
  const first = s.nextFireAtMs as number;
  const spec = s.schedule;
  if (spec === null || spec.kind === 'once') return { latest: first, count: 1 };
  const k = spec.kind;
  if ('interval' in k) {
    const every = k.interval.everySeconds * 1000;
    const count = Math.floor((now - first) / every) + 1;
    return { latest: first + (count - 1) * every, count };
  }
  // Cron: walk forward (bounded; beyond the bound the count is a lower bound, the latest is exact).
  let latest = first;
  let count = 1;
  for (let t = nextFireAfter(spec, first); t !== null && t <= now; t = nextFireAfter(spec, t)) {
    latest = t;
    if (++count >= 100_000) {
      let u = nextFireAfter(spec, now - 1 - 366 * 86_400_000);
      while (u !== null && u <= now) {
        latest = u;
        u = nextFireAfter(spec, u);
      }
      break;
    }
  }
  return { latest, count };
}
