/**
 * The live operation runtime: an in-memory view of each fleet's operation and templates that the
 * scheduler consults on every dispatch decision (`isDispatchable`). LMDB is the truth; the runtime
 * adopts committed changes by re-reading the fleet from LMDB after a writer calls `changed(fleetId)`.
 *
 * Why a separate adoption step: a mutation commits first and is never rolled back; the live view then
 * catches up. The HTTP route waits a short bounded time for that (`awaitSync`) and answers
 * `runtimeSync: "applied"`, or 202 `pending` when the runtime has not adopted the change in time; the
 * runtime keeps trying until it has.
 *
 * Bounds: change requests coalesce per fleet (one generation counter, one adoption loop per fleet),
 * so the work queue is at most one pending adoption per fleet; waiters are the HTTP requests waiting
 * (each leaves on its timeout).
 */
import { pino, type Logger } from 'pino';
import type { Store } from '../../store/lmdb.js';
import { getOperation } from './operation.js';
import type { OperationRecord, TemplateRecord } from './records.js';
import { listTemplates } from './templates.js';

/** One run the effect could not reach (e.g. resume to an offline robot: `unavailable`). */
export interface RunEffectFailure {
  runId: string;
  robotId: string;
  error: string;
}

/** What a run effect did: how many active runs it addressed and which of them failed. */
export interface RunEffectReport {
  count: number;
  failures: RunEffectFailure[];
}

/** What the run tracker does when the operation is paused, resumed or its missions aborted. */
export interface RunEffects {
  pauseRuns(fleetId: string): Promise<RunEffectReport>;
  resumeRuns(fleetId: string): Promise<RunEffectReport>;
  abortRuns(fleetId: string): Promise<RunEffectReport>;
}

/** A fleet as the runtime last adopted it. */
export interface LiveFleet {
  operation: OperationRecord | null;
  templates: ReadonlyMap<string, TemplateRecord>;
  /** Generation of the last adopted change. */
  generation: number;
  adoptedAtMs: number;
}

export type SyncResult = { runtimeSync: 'applied' } | { runtimeSync: 'pending'; runtimeSyncError: string };

/**
 * What an idempotent create commits as its answer together with its records, before the runtime
 * could adopt them; the route replaces it with the real sync result once it has one. Seen only when
 * the gateway failed or stopped in between (after a restart the runtime adopts everything stored).
 */
export const SYNC_UNCONFIRMED: SyncResult = {
  runtimeSync: 'pending',
  runtimeSyncError: 'committed; the request ended before the live operation confirmed adopting it (it adopts every committed change, also after a restart)',
};

export interface RuntimeOptions {
  /** How long `awaitSync` waits by default (ms). Default 2000. */
  syncWaitMs?: number;
  /** Delay between adoption retries after a failure (ms). Default 250. */
  retryMs?: number;
  /** Runs before each adoption; tests make the runtime slow with it. */
  beforeAdopt?: (fleetId: string) => Promise<void>;
  log?: Logger;
}

interface FleetSync {
  requested: number;
  adopted: number;
  adopting: boolean;
  lastError: string | null;
  waiters: { generation: number; resolve: () => void }[];
}

/** The live view of every fleet's operation; one per gateway. */
export class OperationRuntime {
  private readonly live = new Map<string, LiveFleet>();
  private readonly sync = new Map<string, FleetSync>();
  private readonly listeners = new Set<(fleetId: string) => void>();
  private effects: RunEffects | null = null;
  private closed = false;
  private readonly syncWaitMs: number;
  private readonly retryMs: number;
  private readonly log: Logger;

  constructor(
    private readonly store: Store,
    private readonly opts: RuntimeOptions = {},
  ) {
    this.syncWaitMs = opts.syncWaitMs ?? 2000;
    this.retryMs = opts.retryMs ?? 250;
    this.log = opts.log ?? pino({ enabled: false });
  }

  /** Loads every fleet that has an operation (at start, before serving). */
  loadAll(): void {
    for (const { key, value } of this.store.operations.getRange()) this.apply(key, value, 0);
  }

  /** Sets the run tracker's hooks (pause/resume/abort runs in flight). */
  setRunEffects(effects: RunEffects): void {
    this.effects = effects;
  }

  /** The run tracker's hooks, or null when none is attached. */
  runEffects(): RunEffects | null {
    return this.effects;
  }

  /** Calls `fn` after each adoption (the scheduler re-evaluates the fleet); returns an unsubscribe. */
  onAdopted(fn: (fleetId: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** The fleet as last adopted, or undefined when the runtime knows no operation for it. */
  fleet(fleetId: string): LiveFleet | undefined {
    return this.live.get(fleetId);
  }

  /** The live operation of a fleet, or null. */
  operation(fleetId: string): OperationRecord | null {
    return this.live.get(fleetId)?.operation ?? null;
  }

  /** A template as adopted, or undefined. */
  template(fleetId: string, missionId: string): TemplateRecord | undefined {
    return this.live.get(fleetId)?.templates.get(missionId);
  }

  /**
   * Whether a robot may be given a run of this template now (spec: only while the fleet operation is
   * running and the template is enabled), by the adopted view.
   */
  isDispatchable(fleetId: string, missionId: string): boolean {
    const f = this.live.get(fleetId);
    return f?.operation?.state === 'running' && f.templates.get(missionId)?.enabled === true;
  }

  /** Why `isDispatchable` is false (null when it is true). */
  blockedReason(fleetId: string, missionId: string): string | null {
    const f = this.live.get(fleetId);
    if (!f?.operation) return 'operation_missing';
    const t = f.templates.get(missionId);
    if (!t) return 'template_missing';
    if (f.operation.state !== 'running') return `operation_${f.operation.state}`;
    if (!t.enabled) return 'template_disabled';
    return null;
  }

  /**
   * Tells the runtime that the fleet changed in LMDB (after the commit); resolves once a later
   * adoption has completed. Never rejects: failed adoptions are retried until they succeed.
   */
  changed(fleetId: string): Promise<void> {
    const s = this.syncOf(fleetId);
    s.requested += 1;
    const generation = s.requested;
    const done = new Promise<void>((resolve) => s.waiters.push({ generation, resolve }));
    if (!s.adopting) void this.adoptLoop(fleetId, s);
    return done;
  }

  /**
   * `changed(fleetId)` bounded by `waitMs`: `applied` when adopted in time, else `pending` with why.
   * The adoption goes on after a `pending` answer.
   */
  async awaitSync(fleetId: string, waitMs = this.syncWaitMs): Promise<SyncResult> {
    const adopted = this.changed(fleetId).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), waitMs);
    });
    const ok = await Promise.race([adopted, timedOut]);
    clearTimeout(timer);
    if (ok) return { runtimeSync: 'applied' };
    const err = this.sync.get(fleetId)?.lastError;
    return {
      runtimeSync: 'pending',
      runtimeSyncError: err !== null && err !== undefined
        ? `the live operation failed to adopt the change (${err}); it retries until it does`
        : `the live operation has not adopted the change within ${waitMs} ms; it will apply it shortly`,
    };
  }

  /** Stops adopting; pending waiters stay unresolved (their requests time out to `pending`). */
  close(): void {
    this.closed = true;
  }

  private syncOf(fleetId: string): FleetSync {
    let s = this.sync.get(fleetId);
    if (!s) {
      s = { requested: 0, adopted: 0, adopting: false, lastError: null, waiters: [] };
      this.sync.set(fleetId, s);
    }
    return s;
  }

  private async adoptLoop(fleetId: string, s: FleetSync): Promise<void> {
    s.adopting = true;
    try {
      while (!this.closed && s.adopted < s.requested) {
        const target = s.requested;
        try {
          await this.opts.beforeAdopt?.(fleetId);
          if (this.closed) return;
          this.apply(fleetId, getOperation(this.store, fleetId) ?? null, target);
          s.adopted = target;
          s.lastError = null;
        } catch (err) {
          s.lastError = err instanceof Error ? err.message : String(err);
          this.log.error({ err, fleetId }, `operation runtime: adopting fleet ${fleetId} failed, retrying`);
          await new Promise((r) => setTimeout(r, this.retryMs));
          continue;
        }
        const ready = s.waiters.filter((w) => w.generation <= target);
        s.waiters = s.waiters.filter((w) => w.generation > target);
        for (const w of ready) w.resolve();
        for (const fn of this.listeners) {
          try {
            fn(fleetId);
          } catch (err) {
            this.log.error({ err, fleetId }, `operation runtime: listener failed for fleet ${fleetId}`);
          }
        }
      }
    } finally {
      s.adopting = false;
    }
  }

  private apply(fleetId: string, operation: OperationRecord | null, generation: number): void {
    const templates = new Map<string, TemplateRecord>();
    for (const t of listTemplates(this.store, fleetId)) templates.set(t.missionId, t);
    this.live.set(fleetId, { operation, templates, generation, adoptedAtMs: Date.now() });
  }
}
