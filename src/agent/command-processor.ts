/**
 * Applies gateway commands on the robot: at most once per command id (CommandLedger), in arrival
 * order, with a bounded number waiting.
 *
 * Two lanes: urgent commands (stop, mission pause) run on their own lane, so they never wait behind
 * a slow handler working through ordinary commands; everything else runs one at a time in arrival
 * order. A motion command (start, mode, action, go-to, mission start or resume) that was issued
 * before a stop that has arrived is rejected "superseded_by_stop" instead of being applied after it.
 *
 * Policies: a duplicate of a decided command is re-acked with the same decision and not applied;
 * a duplicate of one still being handled is ignored (its ack follows when the handler finishes);
 * a forgotten command with a stale seq is acked REJECTED "stale_seq" without being applied; beyond
 * `maxPending` waiting commands in a lane a new one is acked REJECTED "agent_busy" and not
 * remembered, so a resend may succeed. A throwing handler rejects the command with "handler_error".
 */
import { CommandAck_Status, MissionControl_Action, type Command } from '../gen/fleetgw/v1/robot_link_pb.js';
import { CommandLedger, type Decision } from './command-ledger.js';

/** What the robot's command handler decides. */
export type CommandResult = { accept: true } | { accept: false; reason: string };
export type CommandHandler = (cmd: Command) => CommandResult | Promise<CommandResult>;

export interface CommandCounters {
  commandsApplied: number;
  commandsRejected: number;
  duplicateCommands: number;
}

/** Stop and mission pause: they overtake everything else (spec: never delayed behind a backlog). */
export function isUrgentCommand(cmd: Command): boolean {
  const a = cmd.action;
  return a.case === 'stop' || (a.case === 'missionControl' && a.value.action === MissionControl_Action.PAUSE);
}

/** Commands that can set the robot in motion, which a later stop must not be undone by. */
export function isMotionCommand(cmd: Command): boolean {
  const a = cmd.action;
  switch (a.case) {
    case 'start':
    case 'setMode':
    case 'invokeAction':
    case 'goTo':
    case 'missionStart':
      return true;
    case 'missionControl':
      return a.value.action === MissionControl_Action.RESUME;
    default:
      return false;
  }
}

/** Urgent commands waiting at most (they are few: one stop per request). */
const MAX_URGENT_PENDING = 64;

interface Lane {
  chain: Promise<void>;
  pending: number;
  max: number;
}

export class CommandProcessor {
  private readonly ledger: CommandLedger;
  private readonly normal: Lane;
  private readonly urgent: Lane = { chain: Promise.resolve(), pending: 0, max: MAX_URGENT_PENDING };
  readonly counters: CommandCounters = { commandsApplied: 0, commandsRejected: 0, duplicateCommands: 0 };

  constructor(
    private readonly handler: CommandHandler,
    /** Writes an ack on the current stream (dropped when disconnected; the gateway resends). */
    private readonly sendAck: (commandId: string, d: Decision) => void,
    private readonly log: (line: string) => void,
    opts: { memory: number; maxPending: number; lastAppliedSeq: bigint },
  ) {
    this.normal = { chain: Promise.resolve(), pending: 0, max: Math.max(1, opts.maxPending) };
    // The ledger never evicts a pending id, so this bounds memory at `memory` decisions plus the
    // commands waiting in both lanes.
    this.ledger = new CommandLedger(Math.max(1, opts.memory), opts.lastAppliedSeq);
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
    const urgent = isUrgentCommand(cmd);
    if (!urgent && this.ledger.isStale(cmd.seq)) {
      const d: Decision = { status: CommandAck_Status.REJECTED, reason: 'stale_seq' };
      this.ledger.decide(cmd.commandId, cmd.seq, d);
      this.sendAck(cmd.commandId, d);
      return;
    }
    if (urgent) this.ledger.noteUrgent(cmd.seq);
    const lane = urgent ? this.urgent : this.normal;
    if (lane.pending >= lane.max) {
      this.sendAck(cmd.commandId, { status: CommandAck_Status.REJECTED, reason: 'agent_busy' });
      return;
    }
    this.ledger.begin(cmd.commandId);
    lane.pending++;
    lane.chain = lane.chain.then(async () => {
      const d = await this.decide(cmd);
      lane.pending--;
      this.ledger.decide(cmd.commandId, cmd.seq, d, urgent);
      if (d.status === CommandAck_Status.RECEIVED) this.counters.commandsApplied++;
      else this.counters.commandsRejected++;
      this.sendAck(cmd.commandId, d);
    });
  }

  private async decide(cmd: Command): Promise<Decision> {
    // Checked when the command's turn comes: a stop may have overtaken it while it waited.
    if (isMotionCommand(cmd) && this.ledger.isSuperseded(cmd.seq)) {
      return { status: CommandAck_Status.REJECTED, reason: 'superseded_by_stop' };
    }
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
