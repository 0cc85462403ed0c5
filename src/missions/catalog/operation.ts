/**
 * The fleet's one operation (`operations` db, keyed by fleetId). It is created in the same
 * transaction as the fleet's first mission template (spec: a fleet with no operation answers 404 from
 * control-operation until a template exists) and never deleted: it is long-lived.
 *
 * Operation events go on the operation's timeline (correlation id = operationId).
 */
import { randomUUID } from 'node:crypto';
import { ApiError, apiError } from '../../errors/catalog.js';
import type { EventLog } from '../../events/index.js';
import type { Store } from '../../store/lmdb.js';
import type { FleetRecord } from '../../store/records.js';
import type { OperationRecord } from './records.js';

/** The fleet's operation, or undefined before its first template. */
export function getOperation(store: Store, fleetId: string): OperationRecord | undefined {
  return store.operations.get(fleetId);
}

/**
 * The fleet's operation.
 * @throws ApiError 404 `operation_not_found`
 */
export function requireOperation(store: Store, fleetId: string): OperationRecord {
  const op = getOperation(store, fleetId);
  if (op === undefined) throw apiError('operation_not_found', { fleetId });
  return op;
}

/** Appends an event on the operation's timeline. */
export function operationEvent(events: EventLog, op: OperationRecord, atMs: number, kind: string, data: Record<string, unknown> = {}): void {
  events.append({ fleetId: op.fleetId, correlationId: op.operationId, atMs, kind, subject: { type: 'operation', id: op.operationId }, data });
}

/**
 * Inside a transaction, writing nothing: the fleet's operation, or the one to create (state
 * `stopped`) with its first template.
 * @returns the operation and whether it is new (then {@link putNewOperation} stores it)
 */
export function operationOrNew(store: Store, fleet: FleetRecord, nowMs: number): { op: OperationRecord; created: boolean } {
  const cur = store.operations.get(fleet.fleetId);
  if (cur !== undefined) return { op: cur, created: false };
  const op: OperationRecord = {
    operationId: randomUUID(),
    orgId: fleet.orgId,
    fleetId: fleet.fleetId,
    name: `${fleet.name} operation`,
    state: 'stopped',
    epoch: 0,
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
  };
  return { op, created: true };
}

/** Inside a write transaction: stores a new operation from {@link operationOrNew} with its event. */
export function putNewOperation(store: Store, events: EventLog, op: OperationRecord, nowMs: number): void {
  store.operations.putSync(op.fleetId, op);
  operationEvent(events, op, nowMs, 'operation.created', { name: op.name, state: op.state });
}

/**
 * Applies `change` to the stored operation atomically (check and write in one transaction, so two
 * concurrent actions serialize). `change` returns the next record, null for "no change" (nothing is
 * written, `after` is `before`), or an error to refuse; it must not write. The event gets `{state, epoch}` of the new record plus `data`.
 * @throws ApiError 404 `operation_not_found`, or the error `change` returned
 */
export async function changeOperation(
  store: Store,
  events: EventLog,
  fleetId: string,
  change: (op: OperationRecord) => OperationRecord | null | ApiError,
  nowMs: number,
  kind: string,
  data: Record<string, unknown> = {},
): Promise<{ before: OperationRecord; after: OperationRecord }> {
  const out = await store.root.transaction((): { before: OperationRecord; after: OperationRecord } | ApiError => {
    const before = store.operations.get(fleetId);
    if (before === undefined) return apiError('operation_not_found', { fleetId });
    const next = change(before);
    if (next instanceof ApiError) return next;
    if (next === null) return { before, after: before };
    const after = { ...next, updatedAtMs: nowMs };
    store.operations.putSync(fleetId, after);
    operationEvent(events, after, nowMs, kind, { from: before.state, state: after.state, epoch: after.epoch, ...data });
    return { before, after };
  });
  if (out instanceof ApiError) throw out;
  return out;
}
