/**
 * The durable event log (`events` db). Keys are `<fleetId>/<correlationId>/<seq 16 hex>`, so one
 * correlation's timeline is a single ordered range read. `seq` comes from the log's counter
 * whose high-water mark is written to `meta` (`eventSeq`) before each event, in the same write order,
 * so after a restart numbering resumes above every event that reached the disk (gaps are possible,
 * reuse is not).
 *
 * Writes are asynchronous (no sync I/O on the event loop); an appended event is readable at once
 * because events not yet committed are kept in a small in-memory map until their write commits.
 */
import { randomUUID } from 'node:crypto';
import type { EventRecord } from './record.js';
import { KEY_END, sortableNumber } from '../store/keys.js';
import { eventKey, SEQ_META_KEY, timelinePrefix } from './keys.js';
import type { Keyset, KeysetPage } from '../store/keyset.js';
import { walkGroups, type Budget } from '../store/group-walk.js';
import type { Store } from '../store/lmdb.js';

/**
 * How retention walks the log: keys are grouped by timeline (`<fleetId>/<correlationId>/`), in append
 * order inside a group. `groupOf` gives a key's timeline prefix (null for a malformed key).
 */
const EVENT_KEYS = {
  root: '',
  groupOf: (key: string): string | null => {
    const a = key.indexOf('/');
    const b = a < 0 ? -1 : key.indexOf('/', a + 1);
    return b < 0 ? null : key.slice(0, b + 1);
  },
  groupEnd: (group: string): string => {
    return `${group}${KEY_END}`;
  },
} as const;

export interface TimelineOptions {
  /** At most this many events (default 100, at most 5000). */
  limit?: number;
  /** Only events with `seq` greater than this (keyset cursor). */
  after?: number;
}

export const MAX_TIMELINE_LIMIT = 5000;

/**
 * The event log of one store. Built once per store by the composition root (src/gateway) and handed
 * to every module that appends or reads events: the sequence counter and the not-yet-committed
 * events live here, so two logs on one store would number events twice.
 */
export class EventLog {
  /** Highest seq handed out; read from `meta` on the first append. */
  private lastSeq: number | null = null;
  /** Appended, not yet committed: key -> record. Bounded by the write rate times the commit delay. */
  private readonly pending = new Map<string, EventRecord>();
  private readonly observers = new Set<(e: Readonly<EventRecord>) => void>();
  /** Appended events not yet handed to the observers (drained at the next turn). */
  private readonly unobserved: EventRecord[] = [];

  constructor(readonly store: Store) {}

  /**
   * Registers an observer of every appended event (alerts follow schedules this way). It is called
   * on a later turn, in append order, never inside the appender's transaction; it must not throw.
   * Returns its removal.
   */
  observe(fn: (e: Readonly<EventRecord>) => void): () => void {
    this.observers.add(fn);
    return () => this.observers.delete(fn);
  }

  private drain(): void {
    const batch = this.unobserved.splice(0);
    for (const rec of batch) {
      for (const fn of this.observers) {
        try {
          fn(rec);
        } catch {
          // An observer's failure is its own; the log and the other observers carry on.
        }
      }
    }
  }

  /**
   * Appends an event and returns it with its id and sequence number. The write is queued at once (in
   * call order); `store.root.committed` resolves when it is on disk.
   */
  append(e: Omit<EventRecord, 'eventId' | 'seq'>): EventRecord {
    const { store, pending } = this;
    if (this.lastSeq === null) {
      const stored = store.meta.get(SEQ_META_KEY);
      this.lastSeq = typeof stored === 'number' ? stored : 0;
    }
    this.lastSeq += 1;
    const rec: EventRecord = { ...e, eventId: randomUUID(), seq: this.lastSeq };
    const key = eventKey(rec);
    pending.set(key, rec);
    // Single asynchronous writes execute in call order, so the counter never trails an event on disk.
    store.writes.watch(store.meta.put(SEQ_META_KEY, rec.seq), 'events', 'meta');
    store.events.put(key, rec).then(
      () => pending.delete(key),
      (err: unknown) => {
        pending.delete(key);
        store.writes.failed({ owner: 'events', db: 'events', err });
      },
    );
    if (this.observers.size > 0) {
      // Bounded by what one turn appends; drained at the next turn, outside any open transaction.
      if (this.unobserved.push(rec) === 1) setImmediate(() => this.drain());
    }
    return rec;
  }

  /**
   * Removes events older than `cutMs`, reading and removing within what `budget` has left (and
   * taking from it); resumes from `cursor.events` and advances it. Returns how many it removed.
   */
  async sweep(cursor: { events: string }, cutMs: number, budget: Budget): Promise<number> {
    const { store } = this;
    const old: string[] = [];
    cursor.events = walkGroups<EventRecord>({
      db: store.events,
      root: EVENT_KEYS.root,
      groupOf: EVENT_KEYS.groupOf,
      endOf: EVENT_KEYS.groupEnd,
      // seq order is append order, so the first recent event ends the old head of the timeline.
      judge: (_k, e) => (e.atMs < cutMs ? 'remove' : 'stop'),
    }, cursor.events, budget, old);
    if (old.length === 0) return 0;
    return store.root.transaction(() => {
      let removed = 0;
      // Re-checked inside the transaction.
      for (const k of old) {
        const e = store.events.get(k);
        if (e && e.atMs < cutMs) {
          store.events.removeSync(k);
          removed++;
        }
      }
      return removed;
    });
  }

  /** The events of one correlation in a fleet, in append order. */
  readTimeline(fleetId: string, correlationId: string, opts: TimelineOptions = {}): EventRecord[] {
    const limit = Math.max(1, Math.min(opts.limit ?? 100, MAX_TIMELINE_LIMIT));
    return this.timeline(fleetId, correlationId).page(opts.after === undefined ? null : sortableNumber(opts.after), limit).items;
  }

  /**
   * One correlation's timeline in a fleet as a keyset (append order; a position is a seq as 16 hex
   * digits), committed events and the ones still being written alike.
   */
  timeline(fleetId: string, correlationId: string): Keyset<EventRecord> {
    const prefix = timelinePrefix(fleetId, correlationId);
    return {
      page: (after, limit): KeysetPage<EventRecord> => {
        const from = after === null ? prefix : `${prefix}${after}`;
        const byKey = new Map<string, EventRecord>();
        // limit + 2 rows: the key at `after` itself may come first, and one past the page says
        // whether another page follows.
        for (const { key, value } of this.store.events.getRange({ start: from, end: `${prefix}${KEY_END}`, limit: limit + 2 })) {
          if (key !== from || after === null) byKey.set(key, value);
        }
        for (const [key, rec] of this.pending) if (key.startsWith(prefix) && (after === null ? key >= from : key > from)) byKey.set(key, rec);
        const keys = [...byKey.keys()].sort();
        const page = keys.slice(0, limit);
        const last = page[page.length - 1];
        return {
          items: page.map((k) => byKey.get(k) as EventRecord),
          last: last === undefined ? null : last.slice(prefix.length),
          more: keys.length > limit,
        };
      },
    };
  }
}
