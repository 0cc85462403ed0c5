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
import { createHash } from 'node:crypto';
import { apiError } from '../errors/catalog.js';
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

export interface AuditQuery {
  fleetId: string;
  robotId?: string;
  /** createdAtMs >= fromMs */
  fromMs?: number;
  /** createdAtMs < toMs */
  toMs?: number;
  limit: number;
  cursor?: string;
}

const HIGH = '\uffff';
const t12 = (ms: number): string => Math.max(0, Math.min(ms, 0xffffffffffff)).toString(16).padStart(12, '0');

function queryHash(q: AuditQuery): string {
  const id = [q.fleetId, q.robotId ?? '', q.fromMs ?? '', q.toMs ?? ''].join('|');
  return createHash('sha256').update(id).digest('hex').slice(0, 16);
}

/** Opaque cursor: the last key returned, bound to the exact filters it was issued for. */
function encodeCursor(q: AuditQuery, lastKey: string): string {
  return Buffer.from(JSON.stringify({ q: queryHash(q), k: lastKey })).toString('base64url');
}

function decodeCursor(q: AuditQuery, prefix: string): string {
  try {
    const v = JSON.parse(Buffer.from(q.cursor ?? '', 'base64url').toString('utf8')) as { q?: unknown; k?: unknown };
    if (v.q === queryHash(q) && typeof v.k === 'string' && v.k.startsWith(prefix)) return v.k;
  } catch {
    // Not base64url JSON: the same 400 as a cursor of another query, thrown below.
  }
  throw apiError('audit_cursor_invalid');
}

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
   * One page of command ids, newest first.
   * @throws ApiError `audit_cursor_invalid` for a malformed cursor or one issued for other filters
   */
  query(q: AuditQuery): { commandIds: string[]; nextCursor: string | null } {
    const prefix = q.robotId === undefined ? `f/${q.fleetId}/` : `r/${q.fleetId}/${q.robotId}/`;
    const low = `${prefix}${t12(q.fromMs ?? 0)}`;
    const high = q.toMs === undefined ? `${prefix}${HIGH}` : `${prefix}${t12(q.toMs)}`;
    const after = q.cursor === undefined ? null : decodeCursor(q, prefix);
    const start = after ?? high;
    const ids: string[] = [];
    let lastKey: string | null = null;
    let more = false;
    for (const { key, value } of this.store.audit.getRange({ start, end: low, reverse: true })) {
      if (key === after || key >= high) continue;
      if (ids.length === q.limit) {
        more = true;
        break;
      }
      ids.push(value);
      lastKey = key;
    }
    return { commandIds: ids, nextCursor: more && lastKey !== null ? encodeCursor(q, lastKey) : null };
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
