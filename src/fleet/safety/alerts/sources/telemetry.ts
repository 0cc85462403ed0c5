/**
 * `estop` and `battery_low` from telemetry, read from each robot's snapshot as the snapshot writer
 * puts it to LMDB: at most once a second per robot, never per sample (src/telemetry/ingest/snapshot-writer.ts).
 * Only the row's leading columns are read, and only a change of a robot's state raises or clears.
 *
 * Battery: below `batteryLowPct` raises, at or above `batteryClearPct` clears (hysteresis, so a
 * reading hovering at the threshold does not open and resolve alert after alert).
 *
 * After a restart the state starts from the unresolved alerts, and {@link TelemetryAlerts.reconcile}
 * resolves those whose condition the stored snapshot shows cleared.
 */
import type { Logger } from 'pino';
import type { Store } from '../../../../store/lmdb.js';
import { newSnapshotScalars, readSnapshotScalars, snapshotFleetId, type SnapshotScalars } from '../../../../telemetry/sample/index.js';
import type { AlertService } from '../alert-service.js';
import type { AlertSettings } from '../settings.js';
import { latestConditions } from '../../../../telemetry/snapshots/index.js';

interface RobotState {
  estop: boolean;
  batteryLow: boolean;
}

export class TelemetryAlerts {
  /** One entry per robot that reported (bounded by the registered robots). */
  private readonly robots = new Map<string, RobotState>();
  /** Filled from each snapshot in turn (no object per snapshot). */
  private readonly scalars = newSnapshotScalars();

  constructor(
    private readonly alerts: AlertService,
    private readonly store: Store,
    private readonly settings: AlertSettings,
    private readonly log?: Logger,
  ) {
    for (const a of alerts.unresolvedOf()) {
      if (a.robotId === null || (a.kind !== 'estop' && a.kind !== 'battery_low')) continue;
      const s = this.stateOf(a.robotId);
      if (a.kind === 'estop') s.estop = true;
      else s.batteryLow = true;
    }
  }

  /** A snapshot was written (the snapshot writer's hook): the bytes are read now, not kept. */
  onSnapshot(robotId: string, value: Uint8Array): void {
    try {
      if (readSnapshotScalars(value, this.scalars)) this.apply(robotId, this.scalars, value, Date.now());
    } catch (err) {
      this.log?.error({ err, robotId }, 'alerts: reading a snapshot failed');
    }
  }

  /** Resolves e-stop and battery alerts whose condition the stored snapshot shows cleared (start-up). */
  reconcile(): void {
    for (const a of this.alerts.unresolvedOf()) {
      if (a.robotId === null || (a.kind !== 'estop' && a.kind !== 'battery_low')) continue;
      const c = latestConditions(this.store, a.robotId);
      if (c === undefined) continue;
      const cleared = a.kind === 'estop' ? !c.estop : c.batteryPct >= this.settings.batteryClearPct;
      if (!cleared) continue;
      this.alerts.resolve(a, 'cleared_while_down');
      const s = this.stateOf(a.robotId);
      if (a.kind === 'estop') s.estop = false;
      else s.batteryLow = false;
    }
  }

  /**
   * Applies one robot's latest readings (tested through onSnapshot). The fleet id is read from the
   * snapshot only when an alert is raised or cleared (a string per snapshot was most of what this
   * hook allocated), and before any state changes: a snapshot it cannot be read from changes
   * nothing, so the next one tries again.
   */
  private apply(robotId: string, c: Readonly<SnapshotScalars>, value: Uint8Array, at: number): void {
    const s = this.stateOf(robotId);
    const estopChanged = c.estop !== s.estop;
    const batteryLow = !s.batteryLow && c.batteryPct < this.settings.batteryLowPct;
    const batteryBack = s.batteryLow && c.batteryPct >= this.settings.batteryClearPct;
    if (!estopChanged && !batteryLow && !batteryBack) return;
    const fleetId = snapshotFleetId(value);
    if (estopChanged) {
      s.estop = c.estop;
      if (c.estop) {
        this.alerts.raise({
          kind: 'estop', fleetId, conditionKey: robotId, subject: { type: 'robot', id: robotId }, robotId,
          severity: 'critical', message: 'Emergency stop is pressed.', details: { sampleTsMs: c.tsMs }, atMs: at,
        });
      } else {
        this.alerts.clear(fleetId, 'estop', robotId, 'condition_cleared', at);
      }
    }
    if (batteryLow) {
      s.batteryLow = true;
      const pct = Math.round(c.batteryPct * 10) / 10;
      this.alerts.raise({
        kind: 'battery_low', fleetId, conditionKey: robotId, subject: { type: 'robot', id: robotId }, robotId,
        severity: 'warning', message: `Battery at ${pct} %, below ${this.settings.batteryLowPct} %.`,
        details: { batteryPct: pct, charging: c.charging, thresholdPct: this.settings.batteryLowPct, clearPct: this.settings.batteryClearPct, sampleTsMs: c.tsMs },
        atMs: at,
      });
    } else if (batteryBack) {
      s.batteryLow = false;
      this.alerts.clear(fleetId, 'battery_low', robotId, 'condition_cleared', at);
    }
  }

  private stateOf(robotId: string): RobotState {
    let s = this.robots.get(robotId);
    if (s === undefined) this.robots.set(robotId, (s = { estop: false, batteryLow: false }));
    return s;
  }
}
