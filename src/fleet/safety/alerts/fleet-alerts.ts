/**
 * Alerts, composed: the lifecycle service and every source that raises and clears conditions.
 * src/gateway builds one per store and wires the inputs:
 *
 *   - the robot link (`RobotLink`: online/offline, link conflicts)       -> start(link)
 *   - the telemetry ingest's snapshot hook (`onSnapshot`)                -> telemetry.onSnapshot
 *   - the command service's `exhaustion` observer                        -> commands
 *   - the event log (schedule events)                                    -> observed in start()
 *   - the faults module's observer (`raised` / `cleared`)                -> faults.onFaultRaised / onFaultCleared
 *
 * `start` also starts the hourly retention of resolved alerts (retention.ts) and reconciles: alerts left unresolved by the previous run whose condition cleared while
 * the gateway was down are resolved (`cleared_while_down`).
 */
import type { Logger } from 'pino';
import type { CommandRecord } from '../../../commands/types.js';
import type { EventLog } from '../../../events/log.js';
import type { RobotLink } from '../../../protocol/robot-link.js';
import type { Store } from '../../../store/lmdb.js';
import { AlertService } from './alert-service.js';
import { startAlertRetention } from './retention.js';
import { DEFAULT_ALERT_SETTINGS, type AlertSettings } from './settings.js';
import { CommandAlerts } from './sources/commands.js';
import { FaultAlerts } from './sources/faults.js';
import { RobotLinkAlerts, type RobotLinkAlertOptions } from './sources/robot-link.js';
import { ScheduleAlerts } from './sources/schedules.js';
import { TelemetryAlerts } from './sources/telemetry.js';

export interface FleetAlertsOptions {
  store: Store;
  events: EventLog;
  settings?: Partial<AlertSettings>;
  log?: Logger;
  now?: () => number;
  /** The command service's record of a command (start-up reconciliation of exhausted commands). */
  command?: (commandId: string) => Pick<CommandRecord, 'state'> | undefined;
  /** Sweep timing of the offline check (tests). */
  offline?: RobotLinkAlertOptions;
  maxUnresolvedPerFleet?: number;
}

export class FleetAlerts {
  readonly service: AlertService;
  readonly settings: AlertSettings;
  readonly telemetry: TelemetryAlerts;
  readonly schedules: ScheduleAlerts;
  readonly commands: CommandAlerts;
  readonly faults: FaultAlerts;
  private link: RobotLinkAlerts | null = null;
  private unobserve: (() => void) | null = null;
  private stopRetention: (() => void) | null = null;
  private command: (commandId: string) => Pick<CommandRecord, 'state'> | undefined;

  constructor(private readonly opts: FleetAlertsOptions) {
    this.settings = { ...DEFAULT_ALERT_SETTINGS, ...opts.settings };
    if (this.settings.batteryClearPct < this.settings.batteryLowPct) this.settings.batteryClearPct = this.settings.batteryLowPct;
    this.service = new AlertService({
      store: opts.store,
      events: opts.events,
      ...(opts.now !== undefined ? { now: opts.now } : {}),
      ...(opts.log !== undefined ? { log: opts.log } : {}),
      ...(opts.maxUnresolvedPerFleet !== undefined ? { maxUnresolvedPerFleet: opts.maxUnresolvedPerFleet } : {}),
    });
    this.command = opts.command ?? ((): undefined => undefined);
    this.telemetry = new TelemetryAlerts(this.service, opts.store, this.settings, opts.log);
    this.schedules = new ScheduleAlerts(this.service, opts.store);
    this.commands = new CommandAlerts(this.service, (id) => this.command(id));
    this.faults = new FaultAlerts(this.service);
  }

  /**
   * Subscribes to the link and the event log, reconciles what the previous run left unresolved and
   * starts the offline sweep. `command` reads a command's record (the command service exists only
   * after the alerts, whose exhaustion observer it takes).
   */
  start(link: Pick<RobotLink, 'listen' | 'isOnline' | 'linkConflict'>, command?: (commandId: string) => Pick<CommandRecord, 'state'> | undefined): void {
    if (command !== undefined) this.command = command;
    this.unobserve = this.opts.events.observe((e) => this.schedules.onEvent(e));
    this.telemetry.reconcile();
    this.schedules.reconcile();
    if (command !== undefined || this.opts.command !== undefined) this.commands.reconcile();
    this.link = new RobotLinkAlerts(this.service, this.opts.store, link, this.settings, { ...this.opts.offline, ...(this.opts.now !== undefined ? { now: this.opts.now } : {}) });
    this.link.start();
    this.stopRetention = startAlertRetention(this.opts.store, this.opts.log !== undefined ? { log: this.opts.log } : {});
  }

  /** The offline sweep, run now (tests). */
  sweepOffline(): void {
    this.link?.sweep();
  }

  /** Stops the sweep and the subscriptions; resolves when every alert change is committed. */
  async close(): Promise<void> {
    this.link?.stop();
    this.unobserve?.();
    this.stopRetention?.();
    await this.service.flushed();
  }
}
