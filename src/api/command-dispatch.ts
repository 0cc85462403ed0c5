/**
 * The shared two-phase dispatch of robot-hop commands (control-robot, stop-all and the nested
 * single-robot routes): every command is handed to the command service, and for an online robot
 * written to its stream, before any acknowledgement is awaited, so one slow robot never delays
 * another's stop. The answer leaves only once each command is committed to LMDB (and, with an ack
 * wait, acknowledged or the wait is over).
 */
import type { CommandService, SubmitRequest, Submitted } from '../commands/service.js';
import type { Delivery } from '../commands/types.js';
import { apiError, ApiError, ERROR_CATALOG } from '../errors/catalog.js';
import { MAX_ACK_WAIT_MS, type ControlRobotOutcome, type DeliveryObject } from './schemas/control-robot.js';
import { stopTraceOn, traceStop } from './stop-trace.js';

/** The four spellings of the ack wait (spec, Conventions 4). */
export interface AckWaitFields {
  wait_for_ack?: true;
  wait_for_ack_ms?: number;
  waitForAck?: true;
  waitForAckMs?: number;
}

/**
 * The ack wait asked for, in ms (capped at 30 s), or null for none.
 * @throws ApiError `ack_wait_conflict` when more than one of the four spellings is present
 */
export function ackWaitMs(body: AckWaitFields): number | null {
  const given = [body.wait_for_ack, body.wait_for_ack_ms, body.waitForAck, body.waitForAckMs].filter((v) => v !== undefined);
  if (given.length > 1) throw apiError('ack_wait_conflict');
  const v = given[0];
  if (v === undefined) return null;
  return v === true ? MAX_ACK_WAIT_MS : Math.min(v, MAX_ACK_WAIT_MS);
}

/** The spec's Delivery object as published (no internal fields). */
export function publicDelivery(d: Delivery): DeliveryObject {
  const out: DeliveryObject = { state: d.state, commandId: d.commandId, retryBudgetExhausted: d.retryBudgetExhausted };
  if (d.linkConflict === true) out.linkConflict = true;
  return out;
}

/** A failed target's outcome. */
export function failedOutcome(robotId: string, err: ApiError, delivery?: Delivery): ControlRobotOutcome {
  const out: ControlRobotOutcome = { robotId, success: false, error: { code: err.code, message: err.message } };
  if (delivery) out.delivery = publicDelivery(delivery);
  return out;
}

/** The failure an agent rejection is reported as. */
export function rejectionError(d: Delivery): ApiError {
  return apiError('agent_rejected', { reason: d.rejectReason || 'no reason given' });
}

/**
 * Submits one command per target (phase 1, synchronous, before any wait), then collects acks when
 * `waitMs` is set and waits for each command to be safe (phase 2). A target whose `build` or submit
 * throws an ApiError fails on its own; an agent rejection is a failure outcome.
 * @param urgent a stop: when the ack waits would not fit, it is sent anyway and answered without
 *   waiting (the delivery shows `dispatched`/`deferred`) instead of being refused
 * @throws ApiError `ack_waiters_full` before anything is sent when the waits would not fit (not urgent)
 */
export async function dispatchAll(
  commands: CommandService,
  targets: readonly string[],
  build: (robotId: string) => SubmitRequest,
  requestedWaitMs: number | null,
  signal: AbortSignal,
  urgent = false,
): Promise<ControlRobotOutcome[]> {
  const started = stopTraceOn ? performance.now() : 0;
  const noRoom = requestedWaitMs !== null && commands.waiterRoom() < targets.length;
  // Refuse the whole request before sending anything it could not then report on, unless it stops robots.
  if (noRoom && !urgent) throw apiError('ack_waiters_full');
  const waitMs = noRoom ? null : requestedWaitMs;
  const outcomes: ControlRobotOutcome[] = [];
  const submitted: { at: number; robotId: string; s: Submitted }[] = [];
  if (targets.length > 1) commands.prepareTargets(targets);
  for (const robotId of targets) {
    try {
      const req = build(robotId); // a fresh object per target: mark it instead of copying it
      req.awaitingAck = waitMs !== null;
      const s = commands.submit(req);
      submitted.push({ at: outcomes.length, robotId, s });
      outcomes.push({ robotId, success: true, delivery: publicDelivery(s.delivery) });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      outcomes.push(failedOutcome(robotId, err));
    }
  }
  const sent = stopTraceOn ? performance.now() : 0;
  // One wait (one timer, one abort listener) for the whole request, not one per target.
  const finals = waitMs === null ? submitted.map(({ s }) => s.delivery) : await commands.waitForAcks(submitted.map(({ s }) => s.commandId), waitMs, signal);
  const acked = stopTraceOn ? performance.now() : 0;
  // Every answer, an ack too, waits until its command is stored (src/commands/service.ts): the
  // commands of one request normally commit in one LMDB transaction.
  await Promise.all(submitted.map(({ s }) => s.persisted));
  if (stopTraceOn && submitted.length === 1 && waitMs !== null) traceStop(submitted[0]!.s.commandId, started, sent, acked, performance.now());
  submitted.forEach(({ at, robotId }, i) => {
    const d = finals[i];
    if (!d) return;
    outcomes[at] = d.state === 'agent_rejected' ? failedOutcome(robotId, rejectionError(d), d) : { robotId, success: true, delivery: publicDelivery(d) };
  });
  return outcomes;
}

/** A bulk answer's body: 207 and 502 add the summary `error` and its `code`. */
interface BulkBody {
  error?: string;
  code?: 'partial_failure' | 'unavailable';
}

/** The spec's 200 / 207 / 502 rule over per-robot outcomes; `body` gets `error`/`code` on 207 and 502. */
export function bulkStatus<B extends BulkBody>(outcomes: readonly ControlRobotOutcome[], body: B): { status: 200 | 207 | 502; body: B } {
  const bad = outcomes.filter((o) => !o.success).length;
  if (bad === 0) return { status: 200, body };
  if (bad === outcomes.length) {
    const all = ERROR_CATALOG.all_targets_failed;
    return { status: all.status, body: { ...body, error: apiError('all_targets_failed').message, code: all.code } };
  }
  const some = ERROR_CATALOG.some_targets_failed;
  return { status: some.status, body: { ...body, error: apiError('some_targets_failed', { failed: bad, count: outcomes.length }).message, code: some.code } };
}
