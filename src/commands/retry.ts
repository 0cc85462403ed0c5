/**
 * Background resend policy for commands that were written to a robot's stream but not acknowledged.
 *
 * A `true` from `RobotLink.send` means "handed to HTTP/2", not "the agent has it": a stream that dies
 * right after loses the message. So an unacknowledged command is resent (same commandId and seq; the
 * agent drops duplicates) after `ackTimeoutMs`, then after doubling intervals capped at
 * `maxIntervalMs`, until `maxAttempts` sends in total. After the last send's interval passes without an
 * ack, the budget is spent: `retryBudgetExhausted` becomes true and the command leaves the outbox, so
 * it is never sent again (a stale command arriving much later could surprise the people near the
 * robot). A later ack is still recorded.
 *
 * Urgent commands (stop, mission pause) are the exception: they have no budget and are resent at
 * `maxIntervalMs` until acknowledged (CommandService.retryTick), because a flapping link may swallow
 * any number of sends and a stop must still arrive.
 *
 * Only sends to a connected robot count as attempts: while the robot is offline the command waits
 * (`deferred` / still `dispatched`) and goes out again when the robot reconnects.
 *
 * Defaults: 1 s, 2 s, 4 s, 8 s, 8 s -> sends at 0, 1, 3, 7, 15 s; budget spent at 23 s, inside the
 * 30 s maximum ack wait, so a caller waiting the full 30 s learns `retryBudgetExhausted: true`.
 */

export interface RetryPolicy {
  /** Time after the first send before the first resend (ms). */
  ackTimeoutMs: number;
  /** Each later interval is the previous one times this factor. */
  backoffFactor: number;
  maxIntervalMs: number;
  /** Sends in total, first one included. */
  maxAttempts: number;
  /** How often the backlog is scanned for due resends (ms). */
  tickMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  ackTimeoutMs: 1000,
  backoffFactor: 2,
  maxIntervalMs: 8000,
  maxAttempts: 5,
  tickMs: 250,
};

/** Time to wait for an ack after the `attempts`-th send before acting again. */
export function ackIntervalMs(policy: RetryPolicy, attempts: number): number {
  const n = Math.max(0, attempts - 1);
  return Math.min(policy.maxIntervalMs, policy.ackTimeoutMs * policy.backoffFactor ** n);
}

export type RetryDecision = 'wait' | 'resend' | 'exhausted';

/** What to do now with a command sent `attempts` times, last at `lastSentAtMs`. */
export function retryDecision(policy: RetryPolicy, attempts: number, lastSentAtMs: number, nowMs: number): RetryDecision {
  if (nowMs - lastSentAtMs < ackIntervalMs(policy, attempts)) return 'wait';
  return attempts >= policy.maxAttempts ? 'exhausted' : 'resend';
}
