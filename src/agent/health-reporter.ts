/**
 * The robot's health report on the control stream (HealthReport, docs/faults.md): full state, not
 * deltas. The reporter keeps the robot's current faults and device health and, once the robot set
 * them the first time (an agent that never does sends no report), sends the whole state right after
 * every Welcome, at once when a fault or a device's level or status changes, and every
 * `periodMs` otherwise (so device readings such as temperatures stay fresh and a lost report is
 * corrected by the next one). Device readings alone do not count as a change: they move every tick
 * and would turn the low-rate report into a second telemetry stream.
 */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { HealthReportSchema, type DeviceHealthSchema, type HealthFaultSchema, type HealthReport } from '../gen/fleetgw/v1/robot_link_pb.js';

export type HealthFaultInput = MessageInitShape<typeof HealthFaultSchema>;
export type DeviceHealthInput = MessageInitShape<typeof DeviceHealthSchema>;

/** What the robot knows about its health now. */
export interface HealthState {
  /** Every active fault, one per code. */
  faults: readonly HealthFaultInput[];
  /** Each device's health, one per device id. */
  devices: readonly DeviceHealthInput[];
}

/** Default period of the full report while nothing changes. */
export const HEALTH_REPORT_PERIOD_MS = 10_000;

/** What identifies a change worth an immediate report (readings excluded, see the module comment). */
function signature(state: HealthState): string {
  const faults = state.faults.map((f) => [f.code ?? '', f.severity ?? 0, f.component ?? '', f.message ?? '']);
  const devices = state.devices.map((d) => [d.deviceId ?? '', d.kind ?? 0, d.level ?? 0, d.status ?? '']);
  return JSON.stringify([faults, devices]);
}

export class HealthReporter {
  private state: HealthState = { faults: [], devices: [] };
  private sig = signature(this.state);
  private timer: NodeJS.Timeout | null = null;
  private connected = false;
  /** Nothing is reported before the robot set its state once: an empty report would clear every fault. */
  private known = false;

  /**
   * @param send writes one report on the control stream; false when not connected
   * @param periodMs how often the full state goes out while nothing changes
   */
  constructor(
    private readonly send: (report: HealthReport) => boolean,
    private readonly periodMs = HEALTH_REPORT_PERIOD_MS,
  ) {}

  /** Replaces the robot's health state; sends it at once when it changed (and the link is up). */
  set(state: HealthState): void {
    this.state = state;
    const sig = signature(state);
    const first = !this.known;
    this.known = true;
    if (sig === this.sig && !first) return;
    this.sig = sig;
    if (this.connected) this.flush();
  }

  /** The link was (re)established: report the whole state now, then periodically. */
  onConnected(): void {
    this.connected = true;
    this.flush();
  }

  /** The link is down: nothing is sent until the next onConnected. */
  onDisconnected(): void {
    this.connected = false;
    this.clearTimer();
  }

  /** Stops the periodic report for good. */
  stop(): void {
    this.onDisconnected();
  }

  private flush(): void {
    this.clearTimer();
    if (!this.known) return;
    const report = create(HealthReportSchema, {
      tsMs: BigInt(Date.now()),
      faults: this.state.faults.map((f) => ({ ...f })),
      devices: this.state.devices.map((d) => ({ ...d })),
    });
    if (!this.send(report)) return;
    this.timer = setTimeout(() => this.flush(), this.periodMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
