/**
 * The command audit index. The audit entry of a command is its record in the `commands` db (who
 * asked, key id, robot, action, argument digest, every delivery state change with its time); this
 * index makes `GET /v1/audit-log` a range read by fleet, robot and time.
 *
 * Keys in the `audit` db (time as 12 hex digits of ms, so byte order is time order):
 *   `f/<fleetId>/<t>/<commandId>`            -> commandId  (fleet timeline)
 *   `r/<fleetId>/<robotId>/<t>/<commandId>`  -> commandId  (robot timeline; the fleet is part of the
 *                                                          key so a robot moved to another fleet does
 *                                                          not take its old entries along)
 *   `t/<t>/<commandId>`                      -> `<fleetId> <robotId>` (retention sweep)
 * They are written in the transaction that creates the command (same event turn as its record).
 *
 * Retention (bounded on disk): entries older than `retentionMs` (default 30 days) are removed with
 * their command record, and beyond `maxEntries` (default 1 000 000, about 0.5 GB of records) the
 * oldest go first. The sweep runs hourly and removes at most `sweepBatch` entries per run so it never
 * holds the event loop for long; a backlog is worked off over the following runs. A command still in
 * the outbox is never removed.
 */
import { KEY_END, keyPrefix, sortableNumber } from '../store/keys.js';
import { keysetOver, type Keyset } from '../store/keyset.js';
import type { Store } from '../store/lmdb.js';
import type { CommandRecord } from './types.js';

export interface AuditRetention {
  retentionMs: number;
  maxEntries: number;
  sweepBatch: number;
}

export const DEFAULT_AUDIT_RETENTION: AuditRetention = {
  retentionMs: 30 * 24 * 3600 * 1000,
  maxEntries: 1_000_000,
  sweepBatch: 5000,
};

/** The filters of an audit read (`GET /v1/audit-log`). */
export interface AuditFilter {
  fleetId: string;
  robotId?: string;
  /** createdAtMs >= fromMs */
  fromMs?: number;
  /** createdAtMs < toMs */
  toMs?: number;
}

const HIGH = KEY_END;
const t12 = (ms: number): string => sortableNumber(Math.min(ms, 0xffffffffffff), 12);

export class AuditIndex {
  constructor(
    private readonly store: Store,
    private readonly retention: AuditRetention = DEFAULT_AUDIT_RETENTION,
  ) {}

  /** Writes the index entries of a new command (async puts; they join the caller's transaction). */
  index(rec: CommandRecord): Promise<unknown>[] {
    const t = t12(rec.createdAtMs);
    return [
      this.store.audit.put(`f/${rec.fleetId}/${t}/${rec.commandId}`, rec.commandId),
      this.store.audit.put(`r/${rec.fleetId}/${rec.robotId}/${t}/${rec.commandId}`, rec.commandId),
      this.store.audit.put(`t/${t}/${rec.commandId}`, `${rec.fleetId} ${rec.robotId}`),
    ];
  }

  /**
   * The fleet's commands matching the filter, newest first (by creation time, then id), as a keyset
   * of whatever `load` makes of a command id (entries whose record is gone are skipped).
   */
  entries<R>(q: AuditFilter, load: (commandId: string) => R | undefined): Keyset<R> {
    const prefix = q.robotId === undefined ? keyPrefix('f', q.fleetId) : keyPrefix('r', q.fleetId, q.robotId);
    return keysetOver(this.store.audit, {
      prefix,
      from: t12(q.fromMs ?? 0),
      ...(q.toMs !== undefined ? { to: t12(q.toMs) } : {}),
      reverse: true,
    }, (_key, commandId) => load(commandId));
  }

  /** Up to `limit` command ids matching the filter, newest first. */
  commandIds(q: AuditFilter, limit: number): string[] {
    return this.entries(q, (id) => id).page(null, limit).items;
  }

  /**
   * Removes expired entries (and beyond the entry bound, the oldest), with their command records.
   * @param isPending commands still in the outbox are kept
   * @returns entries removed
   */
  async sweep(nowMs: number, isPending: (commandId: string) => boolean): Promise<number> {
    const cutoff = `t/${t12(nowMs - this.retention.retentionMs)}`;
    const total = this.store.audit.getKeysCount({ start: 't/', end: `t/${HIGH}` });
    let excess = Math.max(0, total - this.retention.maxEntries);
    const writes: Promise<unknown>[] = [];
    let removed = 0;
    for (const { key, value } of this.store.audit.getRange({ start: 't/', end: `t/${HIGH}` })) {
      if (removed >= this.retention.sweepBatch || (key >= cutoff && excess <= 0)) break;
      const [, t, commandId] = key.split('/');
      const [fleetId, robotId] = value.split(' ');
      if (!t || !commandId || !fleetId || !robotId || isPending(commandId)) continue;
      writes.push(
        this.store.audit.remove(key),
        this.store.audit.remove(`f/${fleetId}/${t}/${commandId}`),
        this.store.audit.remove(`r/${fleetId}/${robotId}/${t}/${commandId}`),
        this.store.commands.remove(commandId),
      );
      removed++;
      excess--;
    }
    await Promise.all(writes);
    return removed;
  }
}
