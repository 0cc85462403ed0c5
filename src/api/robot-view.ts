/**
 * Builds the published robot record (schemas/robots.ts RobotView) from the control-plane record and
 * the latest telemetry snapshot. Pure: no I/O, so the mapping is testable on its own.
 */
import type { LinkConflictView } from '../protocol/robot-link.js';
import type { RobotRecord } from '../store/records.js';
import type { TelemetrySnapshot } from '../telemetry/sample/index.js';
import type { MotionTelemetry, RobotView, StatusTelemetry } from './schemas/robots.js';

/**
 * Maps a robot and its latest snapshot (undefined before the first report) to the API record, with
 * its live link state (online, and its link conflict if any).
 */
export function toRobotView(robot: RobotRecord, snap: TelemetrySnapshot | undefined, online: boolean, conflict: LinkConflictView | null = null): RobotView {
  const motion: MotionTelemetry | null = snap
    ? {
        tsMs: snap.tsMs,
        position: { latitude: snap.latitude, longitude: snap.longitude, elevationM: snap.elevationM },
        pose: { xM: snap.pose.xM, yM: snap.pose.yM, zM: snap.pose.zM, headingDeg: snap.pose.headingDeg },
        velocity: { linearMps: snap.velocity.linearMps, angularDps: snap.velocity.angularDps },
        gpsFix: snap.gpsFix,
      }
    : null;
  const status: StatusTelemetry | null = snap
    ? {
        tsMs: snap.tsMs,
        mode: snap.mode,
        estop: snap.estop,
        battery: { percent: snap.battery.percent, voltageV: snap.battery.voltageV, charging: snap.battery.charging },
        // The published names are the mission runs' (docs/api-conventions.md, "Field names");
        // the snapshot keeps the telemetry frame's.
        mission: snap.mission
          ? {
              runId: snap.mission.runId,
              missionState: snap.mission.missionState,
              missionProgressPct: snap.mission.progressPct,
              currentStepIndex: snap.mission.stepIndex,
              remainingDistanceM: snap.mission.remainingDistanceM,
              estimatedTimeRemainingS: snap.mission.etaS,
            }
          : null,
        health: { level: snap.health.level, faults: [...snap.health.faults], cpuTempC: snap.health.cpuTempC },
      }
    : null;
  return {
    id: robot.robotId,
    name: robot.name,
    fleetId: robot.fleetId,
    active: robot.active,
    labels: { ...(robot.labels ?? {}) },
    notes: robot.notes ?? null,
    vda5050: robot.vda5050 === undefined ? null : { manufacturer: robot.vda5050.manufacturer, serialNumber: robot.vda5050.serialNumber },
    online,
    linkConflict: conflict ? { sinceMs: conflict.sinceMs, refusedConnections: conflict.refusedConnections, lastRefusedAtMs: conflict.lastRefusedAtMs } : null,
    capabilities: [...robot.capabilities],
    lastSeenMs: snap?.receivedAtMs ?? null,
    latitude: snap?.latitude ?? null,
    longitude: snap?.longitude ?? null,
    elevationM: snap?.elevationM ?? null,
    headingDeg: snap?.pose.headingDeg ?? null,
    speedMps: snap?.velocity.linearMps ?? null,
    angularDps: snap?.velocity.angularDps ?? null,
    gpsFix: snap?.gpsFix ?? null,
    mode: snap?.mode ?? null,
    estop: snap?.estop ?? null,
    batteryPct: snap?.battery.percent ?? null,
    batteryVoltageV: snap?.battery.voltageV ?? null,
    charging: snap?.battery.charging ?? null,
    missionState: snap?.mission?.missionState ?? null,
    missionProgressPct: snap?.mission?.progressPct ?? null,
    healthLevel: snap?.health.level ?? null,
    motionTelemetry: motion,
    statusTelemetry: status,
  };
}
