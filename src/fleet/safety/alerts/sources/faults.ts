/**
 * `fault` alerts from the faults module (src/fleet/safety/faults). Its observer
 * reports plain fault objects; these are the inputs it calls (wired in src/gateway):
 *
 *   faults observer `raised(f)`  -> FaultAlerts.onFaultRaised(f)
 *   faults observer `cleared(f)` -> FaultAlerts.onFaultCleared(f)
 *   at start, the active faults  -> FaultAlerts.syncActiveFaults(list)   (optional)
 *
 * A fault at `error` severity or worse (`error`, `critical`, `fatal`, `emergency`) opens one alert
 * per (robot, code); a repeat counts on it; the fault clearing (or dropping below error) resolves it.
 */
import type { AlertService } from '../alert-service.js';
import type { AlertSeverity } from '../records.js';

/** A fault as the faults module reports it. */
export interface FaultInput {
  orgId: string;
  fleetId: string;
  robotId: string;
  code: string;
  severity: string;
  component: string;
  message: string;
  raisedAtMs: number;
  clearedAtMs?: number | null;
}

const ALERT_SEVERITY: Readonly<Record<string, AlertSeverity>> = { error: 'error', critical: 'critical', fatal: 'critical', emergency: 'critical' };

/** The alert severity of a fault severity at error or worse; null below that. */
export function faultAlertSeverity(severity: string): AlertSeverity | null {
  return ALERT_SEVERITY[severity.toLowerCase()] ?? null;
}

const keyOf = (f: Pick<FaultInput, 'robotId' | 'code'>): string => `${f.robotId}/${f.code}`;

export class FaultAlerts {
  constructor(private readonly alerts: AlertService) {}

  onFaultRaised(f: Readonly<FaultInput>): void {
    const severity = faultAlertSeverity(f.severity);
    if (severity === null) {
      // Downgraded below error: the alert's condition no longer holds.
      this.alerts.clear(f.fleetId, 'fault', keyOf(f));
      return;
    }
    this.alerts.raise({
      kind: 'fault',
      fleetId: f.fleetId,
      conditionKey: keyOf(f),
      subject: { type: 'robot', id: f.robotId },
      robotId: f.robotId,
      severity,
      message: `Fault ${f.code} (${f.component}): ${f.message}`,
      details: { code: f.code, severity: f.severity, component: f.component, message: f.message, raisedAtMs: f.raisedAtMs },
    });
  }

  onFaultCleared(f: Readonly<FaultInput>): void {
    this.alerts.clear(f.fleetId, 'fault', keyOf(f), 'condition_cleared', f.clearedAtMs ?? undefined);
  }

  /**
   * The faults active now (at start, from the faults module's records): raises those at error or
   * worse, resolves unresolved fault alerts whose fault is no longer among them.
   */
  syncActiveFaults(active: readonly Readonly<FaultInput>[]): void {
    const live = new Set<string>();
    for (const f of active) {
      if (faultAlertSeverity(f.severity) === null) continue;
      live.add(`${f.fleetId}/${keyOf(f)}`);
      if (this.alerts.find(f.fleetId, 'fault', keyOf(f)) === undefined) this.onFaultRaised(f);
    }
    for (const a of this.alerts.unresolvedOf('fault')) {
      if (!live.has(`${a.fleetId}/${a.conditionKey}`)) this.alerts.resolve(a, 'cleared_while_down');
    }
  }
}
