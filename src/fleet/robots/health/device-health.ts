/**
 * The latest health of each device a robot reports (`deviceHealth` db, key robotId), replaced by
 * every health report (docs/faults.md). Read by `GET /v1/robots/{robot_id}/details`.
 */
import type { Store } from '../../../store/lmdb.js';

export type DeviceKindName = 'battery' | 'drive' | 'sensor' | 'computer' | 'other' | 'unspecified';
export type DeviceLevelName = 'unspecified' | 'ok' | 'warn' | 'error';

/** One device's health as the robot reported it last. */
export interface DeviceHealthEntry {
  deviceId: string;
  kind: DeviceKindName;
  level: DeviceLevelName;
  status: string;
  /** Named readings, unit in the name (`temperature_c`). */
  metrics: Record<string, number>;
}

/** A robot's latest device health. */
export interface DeviceHealthRecord {
  robotId: string;
  /** Gateway clock when the report arrived. */
  reportedAtMs: number;
  /** The robot's clock in the report (0 when it sent none). */
  robotTsMs: number;
  devices: DeviceHealthEntry[];
}

declare module '../../../store/lmdb.js' {
  interface StoreDatabases {
    deviceHealth: DeviceHealthRecord;
  }
}

/** Stores a robot's latest device health (asynchronous put; the newest call wins; a failure is reported by the store). */
export function saveDeviceHealth(store: Store, rec: DeviceHealthRecord): void {
  store.writes.watch(store.deviceHealth.put(rec.robotId, rec), 'faults', 'deviceHealth');
}

/** A robot's latest device health, or undefined before its first report. */
export function deviceHealthOf(store: Store, robotId: string): DeviceHealthRecord | undefined {
  return store.deviceHealth.get(robotId);
}
