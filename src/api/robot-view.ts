/**
 * Builds the published robot record (schemas/robots.ts RobotView) from the control-plane record and
 * the latest telemetry snapshot. Pure: no I/O, so the mapping is testable on its own. The telemetry
 * properties are generated (`npm run gen`) from the field table's view paths and the schema.
 */
import type { LinkConflictView } from '../protocol/robot-link.js';
import type { RobotRecord } from '../store/records.js';
import type { TelemetrySnapshot } from '../telemetry/sample/index.js';
import type { RobotView } from './schemas/robots.js';

/**
 * Maps a robot and its latest snapshot (undefined before the first report) to the API record, with
 * its live link state (online, and its link conflict if any).
 */
export function toRobotView(robot: RobotRecord, snap: TelemetrySnapshot | undefined, online: boolean, conflict: LinkConflictView | null = null): RobotView {
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
    ...telemetryView(snap),
  };
}

// --- generated from the field table by `npm run gen` (scripts/codegen/robot-view.mjs): do not edit below ---
/** The view's telemetry properties, in the schema's order. */
type TelemetryProperties = Pick<RobotView, 'lastSeenMs' | 'latitude' | 'longitude' | 'elevationM' | 'headingDeg' | 'speedMps' | 'angularDps' | 'gpsFix' | 'mode' | 'estop' | 'batteryPct' | 'batteryVoltageV' | 'charging' | 'missionState' | 'missionProgressPct' | 'healthLevel' | 'motionTelemetry' | 'statusTelemetry'>;

/** The view's telemetry from the latest snapshot: every value null (and both objects null) before the first report. */
function telemetryView(snap: TelemetrySnapshot | undefined): TelemetryProperties {
  return {
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
    motionTelemetry: snap ? {
      tsMs: snap.tsMs,
      position: {
        latitude: snap.latitude,
        longitude: snap.longitude,
        elevationM: snap.elevationM,
      },
      pose: {
        xM: snap.pose.xM,
        yM: snap.pose.yM,
        zM: snap.pose.zM,
        headingDeg: snap.pose.headingDeg,
      },
      velocity: {
        linearMps: snap.velocity.linearMps,
        angularDps: snap.velocity.angularDps,
      },
      gpsFix: snap.gpsFix,
      mapId: snap.mapId,
    } : null,
    statusTelemetry: snap ? {
      tsMs: snap.tsMs,
      mode: snap.mode,
      estop: snap.estop,
      battery: {
        percent: snap.battery.percent,
        voltageV: snap.battery.voltageV,
        charging: snap.battery.charging,
      },
      mission: snap.mission ? {
        runId: snap.mission.runId,
        missionState: snap.mission.missionState,
        missionProgressPct: snap.mission.progressPct,
        currentStepIndex: snap.mission.stepIndex,
        remainingDistanceM: snap.mission.remainingDistanceM,
        estimatedTimeRemainingS: snap.mission.etaS,
      } : null,
      health: {
        level: snap.health.level,
        faults: [...snap.health.faults],
        cpuTempC: snap.health.cpuTempC,
      },
      loads: {
        count: snap.loads.count,
        ids: [...snap.loads.ids],
        types: [...snap.loads.types],
        weightKg: snap.loads.weightKg,
      },
    } : null,
  };
}
// --- end of generated code ---
