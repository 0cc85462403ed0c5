/**
 * The gateway's side of the robot health report (HealthReport on the control stream, docs/faults.md):
 * bounds what a robot sends, feeds the fault list to the fault tracker and stores each device's
 * latest health. Called on the main thread for each report (low rate: on change and every ~10 s).
 */
import type { HealthReport } from '../../../gen/fleetgw/v1/robot_link_pb.js';
import { DeviceKind, HealthSeverity } from '../../../gen/fleetgw/v1/robot_link_pb.js';
import { HealthLevel } from '../../../gen/fleetgw/v1/telemetry_pb.js';
import type { Store } from '../../../store/lmdb.js';
import type { FaultSeverity } from '../../safety/faults/records.js';
import type { FaultTracker, ReportedFault } from '../../safety/faults/tracker.js';
import { saveDeviceHealth, type DeviceHealthEntry, type DeviceKindName, type DeviceLevelName } from './device-health.js';
import { cachedRobot } from '../../../store/identity-reads.js';

/** Bounds on what one report may carry (the rest is dropped). */
export const HEALTH_LIMITS = { codeChars: 64, componentChars: 64, messageChars: 256, devices: 32, deviceIdChars: 64, statusChars: 64, metrics: 16, metricNameChars: 64 } as const;

// Codes and device ids are identifiers: printable ASCII without spaces.
const IDENT = /^[\x21-\x7e]+$/;

const SEVERITY: Record<number, FaultSeverity> = {
  [HealthSeverity.INFO]: 'info',
  [HealthSeverity.WARNING]: 'warning',
  [HealthSeverity.ERROR]: 'error',
  [HealthSeverity.CRITICAL]: 'critical',
};

const KIND: Record<number, DeviceKindName> = {
  [DeviceKind.BATTERY]: 'battery',
  [DeviceKind.DRIVE]: 'drive',
  [DeviceKind.SENSOR]: 'sensor',
  [DeviceKind.COMPUTER]: 'computer',
  [DeviceKind.OTHER]: 'other',
};

const LEVEL: Record<number, DeviceLevelName> = { [HealthLevel.OK]: 'ok', [HealthLevel.WARN]: 'warn', [HealthLevel.ERROR]: 'error' };

function text(s: string, max: number): string {
  // Control characters would garble logs and JSON consumers' displays.
  let clean = '';
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    clean += c < 0x20 || c === 0x7f ? ' ' : ch;
  }
  return clean.length > max ? clean.slice(0, max) : clean;
}

/** The report's faults, bounded; codes that are not identifiers are dropped. An unspecified severity counts as `warning`. */
export function reportedFaults(report: HealthReport): ReportedFault[] {
  const out: ReportedFault[] = [];
  for (const f of report.faults) {
    if (f.code.length === 0 || f.code.length > HEALTH_LIMITS.codeChars || !IDENT.test(f.code)) continue;
    out.push({
      code: f.code,
      severity: SEVERITY[f.severity] ?? 'warning',
      component: text(f.component, HEALTH_LIMITS.componentChars),
      message: text(f.message, HEALTH_LIMITS.messageChars),
      robotRaisedAtMs: f.raisedAtMs > 0n ? Number(f.raisedAtMs) : null,
    });
  }
  return out;
}

/** The report's devices, bounded (first of a repeated id wins; non-finite readings dropped). */
export function reportedDevices(report: HealthReport): DeviceHealthEntry[] {
  const out: DeviceHealthEntry[] = [];
  const seen = new Set<string>();
  for (const d of report.devices) {
    if (out.length >= HEALTH_LIMITS.devices) break;
    if (d.deviceId.length === 0 || d.deviceId.length > HEALTH_LIMITS.deviceIdChars || !IDENT.test(d.deviceId) || seen.has(d.deviceId)) continue;
    seen.add(d.deviceId);
    const metrics: Record<string, number> = {};
    let n = 0;
    for (const [name, value] of Object.entries(d.metrics)) {
      if (n >= HEALTH_LIMITS.metrics) break;
      if (name.length === 0 || name.length > HEALTH_LIMITS.metricNameChars || !IDENT.test(name) || !Number.isFinite(value)) continue;
      metrics[name] = value;
      n++;
    }
    out.push({ deviceId: d.deviceId, kind: KIND[d.kind] ?? 'unspecified', level: LEVEL[d.level] ?? 'unspecified', status: text(d.status, HEALTH_LIMITS.statusChars), metrics });
  }
  return out;
}

/** Applies one robot health report: faults to the tracker, devices to LMDB. */
export function applyHealthReport(store: Store, faults: FaultTracker, robotId: string, report: HealthReport, nowMs: number): void {
  if (cachedRobot(store, robotId) === undefined) return;
  faults.apply(robotId, reportedFaults(report));
  saveDeviceHealth(store, { robotId, reportedAtMs: nowMs, robotTsMs: Number(report.tsMs), devices: reportedDevices(report) });
}
