/**
 * Applies gateway commands on the robot: at most once per command id (CommandLedger), one at a
 * time in arrival order, with a bounded number waiting.
 *
 * Policies: a duplicate of a decided command is re-acked with the same decision and not applied;
 * a duplicate of one still being handled is ignored (its ack follows when the handler finishes);
 * a forgotten command with a stale seq is acked REJECTED "stale_seq" without being applied; beyond
 * `maxPending` waiting commands a new one is acked REJECTED "agent_busy" and not remembered, so a
 * resend may succeed. A throwing handler rejects the command with "handler_error".
 */
import { CommandAck_Status, type Command } from '../gen/fleetgw/v1/robot_link_pb.js';
import { CommandLedger, type Decision } from './command-ledger.js';

/** What the robot's command handler decides. */
export type CommandResult = { accept: true } | { accept: false; reason: string };
export type CommandHandler = (cmd: Command) => CommandResult | Promise<CommandResult>;

export interface CommandCounters {
  commandsApplied: number;
  commandsRejected: number;
  duplicateCommands: number;
}

export class CommandProcessor {
  private readonly ledger: CommandLedger;
  private readonly maxPending: number;
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  readonly counters: CommandCounters = { commandsApplied: 0, commandsRejected: 0, duplicateCommands: 0 };

  constructor(
    private readonly handler: CommandHandler,
    /** Writes an ack on the current stream (dropped when disconnected; the gateway resends). */
    private readonly sendAck: (commandId: string, d: Decision) => void,
    private readonly log: (line: string) => void,
    opts: { memory: number; maxPending: number; lastAppliedSeq: bigint },
  ) {
    this.maxPending = Math.max(1, opts.maxPending);
    // Memory must outlive every command still waiting, or a pending id could be forgotten.
    this.ledger = new CommandLedger(Math.max(opts.memory, this.maxPending + 1), opts.lastAppliedSeq);
  }

  /** Highest seq the handler accepted. */
  get lastAppliedSeq(): bigint {
    return this.ledger.lastAppliedSeq;
  }

  handle(cmd: Command): void {
    const seen = this.ledger.get(cmd.commandId);
    if (seen) {
      this.counters.duplicateCommands++;
      if (seen.state === 'decided') this.sendAck(cmd.commandId, seen.decision);
      return;
    }
    if (this.ledger.isStale(cmd.seq)) {
      const d: Decision = { status: CommandAck_Status.REJECTED, reason: 'stale_seq' };
      this.ledger.decide(cmd.commandId, cmd.seq, d);
      this.sendAck(cmd.commandId, d);
      return;
    }
    if (this.pending >= this.maxPending) {
      this.sendAck(cmd.commandId, { status: CommandAck_Status.REJECTED, reason: 'agent_busy' });
      return;
    }
    this.ledger.begin(cmd.commandId);
    this.pending++;
    this.chain = this.chain.then(async () => {
      const d = await this.decide(cmd);
      this.pending--;
      this.ledger.decide(cmd.commandId, cmd.seq, d);
      if (d.status === CommandAck_Status.RECEIVED) this.counters.commandsApplied++;
      else this.counters.commandsRejected++;
      this.sendAck(cmd.commandId, d);
    });
  }

  private async decide(cmd: Command): Promise<Decision> {
    try {
      const r = await this.handler(cmd);
      return r.accept
        ? { status: CommandAck_Status.RECEIVED, reason: '' }
        : { status: CommandAck_Status.REJECTED, reason: r.reason || 'rejected' };
    } catch (err) {
      this.log(`command ${cmd.commandId}: handler failed: ${err instanceof Error ? err.message : String(err)}`);
      return { status: CommandAck_Status.REJECTED, reason: 'handler_error' };
    }
  }
}
