/**
 * The command outbox: every command record in LMDB (`commands`), plus an `outbox` index of the
 * commands still owed to a robot, and an in-memory mirror of that backlog.
 *
 * Why a mirror: lmdb-js writes are asynchronous (batched per event turn, committed on a writer
 * thread), and a read does not see a write until it commits. The mirror is the process's truth for
 * records that are pending or have a write in flight; LMDB is the truth across restarts.
 *
 * Writes are issued at the end of the event turn that asked for them (write-behind.ts: after the
 * turn's gRPC frames have left), all together, so they land in one LMDB transaction: a new command's
 * record, its outbox entry and audit keys commit together or not at all. That first write is what
 * makes a command exist: {@link CommandOutbox.storedOf} is what every answer about a command waits
 * for (the service's durability point).
 *
 * Seq numbers come from seq-counter.ts: a seq is sent only once a reservation covering it has
 * committed, so none is handed out twice, also across a crash.
 *
 * Bounds (policy when full: the new command is refused with `outbox_full`, nothing is written or
 * sent, and the caller reports that robot's outcome as `unavailable`):
 *   - `maxPerRobot` pending commands per robot (default 1000);
 *   - `maxTotal` pending commands across all robots (default 100 000).
 * Urgent commands (stop, mission pause) are never refused by those bounds: a full backlog must not
 * keep a robot from being stopped. They have their own bound, `maxUrgentPerRobot` (default 16): past
 * it, the service folds a new stop into the robot's newest pending urgent command (see
 * CommandService.submit), so repeated stop_all calls against offline robots cannot grow without end.
 */
import { apiError } from '../errors/catalog.js';
import type { Store } from '../store/lmdb.js';
import { outboxKey, parseOutboxKey } from './keys.js';
import { SeqCounter } from './seq-counter.js';
import { isUrgent, type CommandRecord } from './types.js';
import { WriteBehind } from './write-behind.js';

export { SEQ_BLOCK } from './seq-counter.js';

/** How often a record write that failed is queued again before the record leaves memory anyway. */
const MAX_REWRITES = 3;

export interface OutboxLimits {
  maxPerRobot: number;
  maxTotal: number;
  maxUrgentPerRobot: number;
}

export const DEFAULT_OUTBOX_LIMITS: OutboxLimits = { maxPerRobot: 1000, maxTotal: 100_000, maxUrgentPerRobot: 16 };

/** Validates a record read back from LMDB (another version, or a damaged entry, is skipped). */
function isCommandRecord(v: unknown): v is CommandRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Partial<CommandRecord>;
  return typeof r.commandId === 'string' && typeof r.robotId === 'string' && typeof r.seq === 'number'
    && typeof r.state === 'string' && Array.isArray(r.history);
}

/** The writes that share one lmdb-js commit promise. */
interface WriteBatch {
  /** Writes issued (counted into `writeErrors` when the commit fails). */
  ops: number;
  /** Record writes: each one ends its record's write-in-flight count. */
  records: CommandRecord[];
  /** Settles after the bookkeeping of the batch ran; rejects with the write error. */
  done: Promise<void>;
}

export class CommandOutbox {
  /** Pending records plus records whose last write has not committed yet. */
  private readonly live = new Map<string, CommandRecord>();
  /** robotId -> pending records in seq order. */
  private readonly pending = new Map<string, CommandRecord[]>();
  private readonly pendingIds = new Set<string>();
  /** commandId -> writes of that record not yet committed. */
  private readonly writesInFlight = new Map<string, number>();
  /**
   * Writes not yet settled, grouped by the promise lmdb-js returned for them. lmdb-js returns one
   * shared promise for every unconditional write of a transaction, so a command's five or so writes
   * (and a 100-robot request's five hundred) cost one `then` instead of one chain each.
   */
  private readonly batches = new Map<Promise<unknown>, WriteBatch>();
  private readonly writes = new WriteBehind();
  private readonly seqs: SeqCounter;
  /** Records whose write is queued for the end of this turn (packed once, in their latest state). */
  private readonly dirty = new Set<CommandRecord>();
  /** Each record's latest queued or uncommitted write (what a caller waiting on the record awaits). */
  private readonly pendingWrite = new WeakMap<CommandRecord, Promise<void>>();
  /** commandId -> times its record write failed and was queued again. */
  private readonly rewrites = new Map<string, number>();
  /** Commands whose outbox entry has been issued to LMDB (and not yet its removal). */
  private readonly indexed = new Set<string>();
  /**
   * Each new record's first write (record, outbox entry, audit keys): settles when all of it has
   * committed. Entries go with their record (a record loaded from LMDB has none: it is stored).
   */
  private readonly stored = new WeakMap<CommandRecord, Promise<void>>();
  /** Records whose first write is still queued (lazily held, or waiting for the end of the turn). */
  private readonly held = new WeakSet<CommandRecord>();
  /** Failed LMDB writes since start (a disk problem; surfaced by the service's stats). */
  writeErrors = 0;

  constructor(
    private readonly store: Store,
    private readonly limits: OutboxLimits = DEFAULT_OUTBOX_LIMITS,
  ) {
    this.seqs = new SeqCounter(store, this.writes, (robotId) => this.pendingFor(robotId).map((r) => r.seq), (p) => this.track(p));
  }

  /**
   * Reads the persisted backlog into memory (gateway start). Entries whose record is missing or
   * already acknowledged are dropped from the index. Returns the number of pending commands.
   */
  load(): number {
    const stale: string[] = [];
    for (const { key, value } of this.store.outbox.getRange({})) {
      const k = parseOutboxKey(key);
      const rec = this.store.commands.get(value);
      if (!k || !isCommandRecord(rec) || rec.robotId !== k.robotId || rec.seq !== k.seq
        || rec.state === 'agent_received' || rec.state === 'agent_rejected' || rec.retryBudgetExhausted) {
        stale.push(key);
        continue;
      }
      this.live.set(rec.commandId, rec);
      this.queueOf(rec.robotId).push(rec);
      this.pendingIds.add(rec.commandId);
      this.indexed.add(rec.commandId);
    }
    for (const key of stale) this.store.writes.watch(this.track(this.store.outbox.remove(key)), 'commands', 'outbox');
    return this.pendingIds.size;
  }

  /**
   * Stores a new command and queues it for its robot. The seq is assigned here; `beforeWrite` runs
   * with the numbered record before it is written (the service sends it there, so the first write
   * already holds the post-send state).
   * @returns the record and a promise that settles when the record, its outbox entry and the writes
   *   of `alsoWrite` are committed (rejects when LMDB fails to write them): {@link storedOf}.
   *   `beforeWrite` may throw to refuse the command: nothing is then stored. `alsoWrite` issues
   *   further writes that must commit with the record (the audit index); it runs at the end of the
   *   turn, with the rest of the record's writes.
   *   `lazyWrite` (asked after `beforeWrite`): the writes may wait up to LAZY_MS (write-behind.ts) for the record's next state. Meant
   *   for a command already on the robot's stream whose caller waits for the ack: when the ack comes
   *   first, the record is packed once, in its settled state, and its outbox entry is never written.
   * @throws ApiError `outbox_full` when a bound is reached (nothing is stored).
   */
  add(
    fields: Omit<CommandRecord, 'seq'>,
    beforeWrite?: (record: CommandRecord) => void,
    alsoWrite?: (record: CommandRecord) => Promise<unknown>[],
    lazyWrite?: () => boolean,
  ): { record: CommandRecord; persisted: Promise<void> } {
    const queue = this.queueOf(fields.robotId);
    if (!isUrgent(fields) && (queue.length >= this.limits.maxPerRobot || this.pendingIds.size >= this.limits.maxTotal)) {
      throw apiError('outbox_full', { robotId: fields.robotId });
    }
    // Committed before the command can be sent (seq-counter.ts).
    const seq = this.seqs.next(fields.robotId);
    const record: CommandRecord = { ...fields, seq };
    beforeWrite?.(record);
    const lazy = lazyWrite?.() ?? false;
    this.seqs.use(record.robotId, seq);
    // Queued in this turn -> issued together -> one LMDB transaction: the writes are atomic.
    const written = this.writeRecord(record, lazy);
    this.held.add(record);
    const indexed = this.writes.defer(() => {
      this.held.delete(record);
      const issued: Promise<void>[] = [];
      // Already settled by the time its writes go out: the record alone says so; no outbox entry.
      if (this.pendingIds.has(record.commandId)) {
        this.indexed.add(record.commandId);
        issued.push(this.track(this.store.outbox.put(outboxKey(record.robotId, seq), record.commandId)));
      }
      for (const p of alsoWrite?.(record) ?? []) issued.push(this.track(p));
      return issued;
    }, lazy);
    // Both halves normally share one commit (one lmdb-js transaction); waiting on both does not rely on it.
    const persisted = Promise.all([written, indexed]).then(() => undefined);
    persisted.catch(() => undefined); // callers that await it see the error
    this.stored.set(record, persisted);
    this.live.set(record.commandId, record);
    queue.push(record);
    this.pendingIds.add(record.commandId);
    return { record, persisted };
  }

  /** Persists the current content of a record (after a state change). */
  save(record: CommandRecord): void {
    void this.writeRecord(record);
  }

  /**
   * Takes a record off its robot's backlog (acknowledged or out of retries) and persists it. The
   * writes are lazy (write-behind.ts): losing them in a crash only means a resend the agent answers
   * from its ledger, or for a command out of retries, one more try.
   */
  settle(record: CommandRecord): void {
    const queue = this.pending.get(record.robotId);
    const at = queue && this.pendingIds.has(record.commandId) ? queue.findIndex((r) => r.commandId === record.commandId) : -1;
    if (queue && at >= 0) {
      queue.splice(at, 1);
      this.pendingIds.delete(record.commandId);
      if (queue.length === 0) this.pending.delete(record.robotId);
      const key = outboxKey(record.robotId, record.seq);
      const id = record.commandId;
      this.writes.deferQuiet(() => {
        // Nothing to remove when the entry was never written (settled before its first write).
        if (!this.indexed.delete(id)) return [];
        return this.track(this.store.outbox.remove(key));
      }, true);
    }
    void this.writeRecord(record, true);
  }

  /**
   * Settles when the record's first write (record, outbox entry, audit keys) has committed, at once
   * for a record that was loaded from LMDB or whose first write committed long ago: what any answer
   * about the command waits for, acknowledged or not (a caller must never be told about a command a
   * crash could erase). Sends a first write that is still held out at the end of this turn.
   */
  storedOf(record: CommandRecord): Promise<void> {
    this.hurry(record);
    return this.stored.get(record) ?? Promise.resolve();
  }

  /** Sends the record's held first write out at the end of this turn (somebody will wait for it now). */
  hurry(record: CommandRecord): void {
    if (this.held.has(record)) this.writes.hurry();
  }

  /**
   * The records' acks are in and their answers now wait for the commit: their held first writes (with
   * the acks' settled states) go out now rather than at the end of the turn ({@link WriteBehind.flushSoon}).
   */
  release(records: readonly CommandRecord[]): void {
    if (records.some((r) => this.held.has(r))) this.writes.flushSoon();
  }

  /** The live record, or the committed one from LMDB; undefined when unknown. */
  get(commandId: string): CommandRecord | undefined {
    const rec = this.live.get(commandId);
    if (rec) return rec;
    const stored = this.store.commands.get(commandId);
    // Records written before request/response commands existed lack `result` / `argsDigest`.
    return isCommandRecord(stored) ? { ...stored, result: stored.result ?? null, argsDigest: stored.argsDigest ?? '' } : undefined;
  }

  /**
   * A record to mutate for an incoming ack: the live one, or one read back from LMDB and made live
   * until its next write commits (a late ack after a restart or after the retry budget ran out).
   */
  getForUpdate(commandId: string): CommandRecord | undefined {
    const rec = this.get(commandId);
    if (rec) this.live.set(commandId, rec);
    return rec;
  }

  /** A robot's backlog in seq order (the array is the outbox's own; do not mutate). */
  pendingFor(robotId: string): readonly CommandRecord[] {
    return this.pending.get(robotId) ?? [];
  }

  /** Robots that have a backlog. */
  robotsWithPending(): IterableIterator<string> {
    return this.pending.keys();
  }

  isPending(commandId: string): boolean {
    return this.pendingIds.has(commandId);
  }

  get pendingCount(): number {
    return this.pendingIds.size;
  }

  /** Resolves when every write issued so far has settled. */
  async drain(): Promise<void> {
    // A failed write may queue its retry while we wait: loop until nothing is queued or in flight,
    // a bounded number of rounds (a disk that keeps failing must not hold the shutdown forever).
    for (let round = 0; round <= MAX_REWRITES + 1; round++) {
      this.writes.flush();
      await Promise.allSettled([...this.batches.values()].map((b) => b.done));
      if (this.batches.size === 0 && !this.writes.queued) return;
    }
  }

  private queueOf(robotId: string): CommandRecord[] {
    let q = this.pending.get(robotId);
    if (!q) {
      q = [];
      this.pending.set(robotId, q);
    }
    return q;
  }

  /** Moves a robot's seq counter past `seq`, which its agent reported applying (seq-counter.ts). */
  raiseSeq(robotId: string, seq: number): void {
    this.seqs.raise(robotId, seq);
  }

  /** Reserves the robot's next seqs ahead, so its commands do not wait for a reservation (robot connected). */
  prepareSeq(robotId: string): void {
    this.seqs.prepare(robotId);
  }

  /**
   * Covers each robot's next seq by a committed reservation now, in one commit for all of them (a
   * bulk request's targets). Best effort: a robot left uncovered is reserved, or refused, on submit.
   */
  ensureSeqs(robotIds: Iterable<string>): void {
    try {
      this.seqs.ensure(robotIds);
    } catch {
      // submit() tries again per robot and fails that robot alone.
    }
  }

  /**
   * Queues a write of the record for the end of the turn (packed then, in its latest state, once
   * however often it was asked for); when its last write commits and it is no longer pending it
   * leaves memory.
   */
  private writeRecord(record: CommandRecord, lazy = false): Promise<void> {
    if (this.dirty.has(record)) {
      if (!lazy) this.writes.hurry();
      return this.pendingWrite.get(record) ?? Promise.resolve();
    }
    this.dirty.add(record);
    const id = record.commandId;
    this.writesInFlight.set(id, (this.writesInFlight.get(id) ?? 0) + 1);
    const written = this.writes.defer(() => {
      this.dirty.delete(record);
      const batch = this.batchOf(this.store.commands.put(id, record));
      batch.ops++;
      batch.records.push(record);
      return batch.done;
    }, lazy);
    this.pendingWrite.set(record, written);
    // Callers that await it see the error; nobody else has to handle it.
    written.catch(() => undefined);
    return written;
  }

  /** Counts a write into its commit's batch; returns the batch's settled promise. */
  private track(p: Promise<unknown>): Promise<void> {
    const batch = this.batchOf(p);
    batch.ops++;
    return batch.done;
  }

  private batchOf(p: Promise<unknown>): WriteBatch {
    const known = this.batches.get(p);
    if (known) return known;
    const batch: WriteBatch = { ops: 0, records: [], done: Promise.resolve() };
    batch.done = p.then(
      () => this.finish(p, batch, false),
      (err: unknown) => {
        this.writeErrors += batch.ops;
        this.finish(p, batch, true);
        throw err;
      },
    );
    // Callers that await `done` see the error; nobody else has to handle it.
    batch.done.catch(() => undefined);
    this.batches.set(p, batch);
    return batch;
  }

  private finish(p: Promise<unknown>, batch: WriteBatch, failed: boolean): void {
    if (this.batches.get(p) === batch) this.batches.delete(p);
    for (const record of batch.records) {
      const id = record.commandId;
      const left = (this.writesInFlight.get(id) ?? 1) - 1;
      if (left > 0) {
        this.writesInFlight.set(id, left);
        continue;
      }
      this.writesInFlight.delete(id);
      if (failed && this.live.get(id) === record) {
        // Not stored: keep it readable and try again (a caller may have been answered on the ack,
        // and the record is its only audit entry). A command still owed to a robot is retried until
        // it is stored (the outbox bounds limit how many); a settled one a bounded number of times.
        const tries = (this.rewrites.get(id) ?? 0) + 1;
        if (tries <= MAX_REWRITES || this.pendingIds.has(id)) {
          this.rewrites.set(id, tries);
          void this.writeRecord(record, true);
          continue;
        }
      }
      this.rewrites.delete(id);
      if (!this.pendingIds.has(id) && this.live.get(id) === record) this.live.delete(id);
    }
  }
}
