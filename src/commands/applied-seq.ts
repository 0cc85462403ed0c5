/**
 * Which of a reconnecting robot's pending commands its Hello settles: the agent reports the highest
 * seq it applied (`last_applied_seq`), and the commands it has already decided must not be sent to it
 * again (an acked stop resent after a gateway crash is a second halt to an agent that has since
 * restarted, and a forgotten non-urgent command would be refused `stale_seq` and recorded as
 * rejected although it was applied).
 *
 * What the agent's seq semantics allow (src/agent/command-ledger.ts, command-processor.ts):
 * - The command with seq == applied was accepted (RECEIVED): exactly known.
 * - The gateway writes commands to a stream in an order where a stop or mission pause never comes
 *   after a higher seq (creation order while connected; a reconnect flush sends urgent commands
 *   first, each group in seq order), and a stream delivers a prefix of what was written. So an urgent
 *   command below `applied` that was sent (attempts > 0) reached the agent before the one with seq ==
 *   applied, on that stream or an earlier one: the agent has decided it.
 * - A non-urgent command below `applied` is only known to have arrived when the command at `applied`
 *   is itself non-urgent (the agent's stale-seq mark then passed it too: a resend could never be
 *   applied). Urgent commands jump ahead of older non-urgent ones in a flush and do not move the
 *   stale mark, so below an urgent `applied` an older cancel, abort or configuration write may never
 *   have arrived: those, and any whose `applied` command the gateway no longer holds as pending, are
 *   left to the reconnect flush (sent again; the agent applies them, or answers from its memory).
 * - Only a command that was actually sent (attempts > 0) can be settled: a seq reused after an OS
 *   crash lost its reservation (seq-counter.ts) must be delivered, not assumed.
 *
 * How they are recorded: `agent_received` with `ackSource: 'hello'`. The agent's individual decision
 * on a command below `applied` is not in the Hello: it may have refused it (its handler said no, or
 * its lane was full), so the record says what the gateway knows (the robot got it and moved past it)
 * and marks it as inferred. An ack the agent sends later (a command still running when the Hello
 * was sent) replaces the inference.
 */
import { isUrgent, type CommandRecord } from './types.js';

/**
 * The pending commands of `backlog` (one robot's, in seq order) that a Hello reporting `applied` as
 * the last applied seq settles (see the header).
 */
export function settledByHello(backlog: readonly CommandRecord[], applied: number): CommandRecord[] {
  if (applied <= 0) return [];
  const top = backlog.find((r) => r.seq === applied && r.attempts > 0);
  const passedNonUrgent = top !== undefined && !isUrgent(top);
  return backlog.filter((r) => r.attempts > 0 && r.seq <= applied && (r === top || isUrgent(r) || passedNonUrgent));
}
