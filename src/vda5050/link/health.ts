/**
 * A robot's VDA 5050 `errors` and safety state as a HealthReport (docs/faults.md): one fault per
 * error type, the e-stop and a protective field violation as faults of their own, the battery as a
 * device. A report is a full state, so the link sends one when the set of faults changes and at
 * least every {@link HEALTH_REFRESH_MS} while the robot is online.
 */
import { create } from '@bufbuild/protobuf';
import { DeviceKind, HealthReportSchema, HealthSeverity, type HealthReport } from '../../gen/fleetgw/v1/robot_link_pb.js';
import { HealthLevel } from '../../gen/fleetgw/v1/telemetry_pb.js';
import type { VdaState } from './messages.js';

/** The longest time between two health reports of an online robot. */
export const HEALTH_REFRESH_MS = 30_000;

/** What decides whether a new report is due: the faults, not the battery reading. */
export function healthSignature(state: VdaState): string {
  const parts = state.errors.map((e) => `${e.errorType}:${e.errorLevel}:${e.errorDescription}`);
  parts.push(`estop:${state.safetyState.eStop}`, `field:${String(state.safetyState.fieldViolation)}`);
  return parts.join('|');
}

/** The robot's health report at `tsMs`. */
export function healthReportOf(state: VdaState, tsMs: number): HealthReport {
  const faults = new Map<string, { code: string; severity: HealthSeverity; component: string; message: string }>();
  for (const e of state.errors) {
    if (faults.has(e.errorType)) continue;
    const ref = e.errorReferences.find((r) => r.referenceKey !== 'headerId' && r.referenceKey !== 'topic');
    faults.set(e.errorType, {
      code: e.errorType,
      // FATAL: the robot cannot go on without help; WARNING: it can.
      severity: e.errorLevel === 'FATAL' ? HealthSeverity.CRITICAL : HealthSeverity.WARNING,
      component: ref ? `${ref.referenceKey}=${ref.referenceValue}`.slice(0, 128) : '',
      message: e.errorDescription.slice(0, 1024),
    });
  }
  if (state.safetyState.eStop !== 'NONE') {
    const code = `estop_${state.safetyState.eStop.toLowerCase()}`;
    faults.set(code, { code, severity: HealthSeverity.CRITICAL, component: 'safety', message: `emergency stop active (${state.safetyState.eStop})` });
  }
  if (state.safetyState.fieldViolation) {
    faults.set('protective_field_violation', { code: 'protective_field_violation', severity: HealthSeverity.WARNING, component: 'safety', message: 'a protective field is violated' });
  }
  const b = state.batteryState;
  return create(HealthReportSchema, {
    tsMs: BigInt(Math.trunc(tsMs)),
    faults: [...faults.values()],
    devices: [{
      deviceId: 'battery',
      kind: DeviceKind.BATTERY,
      level: b.batteryCharge < 10 ? HealthLevel.WARN : HealthLevel.OK,
      status: b.charging ? 'charging' : 'ok',
      metrics: { charge_pct: b.batteryCharge, ...(b.batteryVoltage > 0 ? { voltage_v: b.batteryVoltage } : {}) },
    }],
  });
}
