/**
 * `command_retry_exhausted` from the command service's exhaustion observer: a command that was sent
 * and resent without an ack until its retry budget ran out left the outbox and is never sent again
 * (docs/commands.md), so whether the robot acted on it is unknown. Stop and mission pause have no
 * budget (they are resent until acknowledged), so they never raise this.
 *
 * Resolved when the robot acknowledges the command after all (a late ack). After a restart, an
 * unresolved alert whose command is now acknowledged (or gone) is resolved.
 */
import type { CommandExhaustionObserver, ExhaustedCommand } from '../../../../commands/service-types.js';
import type { CommandRecord } from '../../../../commands/types.js';
import type { AlertService } from '../alert-service.js';

export class CommandAlerts implements CommandExhaustionObserver {
  constructor(
    private readonly alerts: AlertService,
    /** The command's record, or undefined (the command service's `get`). */
    private readonly command: (commandId: string) => Pick<CommandRecord, 'state'> | undefined,
  ) {}

  retryBudgetExhausted(cmd: ExhaustedCommand): void {
    this.alerts.raise({
      kind: 'command_retry_exhausted',
      fleetId: cmd.fleetId,
      conditionKey: cmd.commandId,
      subject: { type: 'command', id: cmd.commandId },
      robotId: cmd.robotId,
      severity: 'warning',
      message: `Command ${cmd.action} was sent ${cmd.attempts} time(s) without an acknowledgement and will not be sent again; check the robot.`,
      details: { action: cmd.action, attempts: cmd.attempts, createdAtMs: cmd.createdAtMs, lastSentAtMs: cmd.lastSentAtMs },
      correlationId: cmd.robotId,
    });
  }

  acknowledgedAfterExhaustion(cmd: ExhaustedCommand): void {
    this.alerts.clear(cmd.fleetId, 'command_retry_exhausted', cmd.commandId);
  }

  /** Start-up: resolves alerts whose command was acknowledged meanwhile. */
  reconcile(): void {
    for (const a of this.alerts.unresolvedOf('command_retry_exhausted')) {
      const rec = this.command(a.subject.id);
      if (rec === undefined) this.alerts.resolve(a, 'subject_removed');
      else if (rec.state === 'agent_received' || rec.state === 'agent_rejected') this.alerts.resolve(a, 'cleared_while_down');
    }
  }
}
