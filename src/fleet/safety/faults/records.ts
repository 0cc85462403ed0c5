/** Fault records in LMDB (`faults` db); msgpack-safe only. docs/faults.md. */

/** How bad a fault is, as the robot reports it (lowest to highest). */
export type FaultSeverity = 'info' | 'warning' | 'error' | 'critical';

export const FAULT_SEVERITIES: readonly FaultSeverity[] = ['info', 'warning', 'error', 'critical'];

/** A fault's lifecycle: active from its raise until the robot stops reporting it. */
export type FaultState = 'active' | 'cleared';

/**
 * One occurrence of a fault on a robot: raised when a code first appears in the robot's health
 * report, cleared when a later report no longer lists it. While active it is the only record of its
 * (robot, code): repeats in later reports update it rather than adding records.
 */
export interface FaultRecord {
  faultId: string;
  orgId: string;
  /** The robot's fleet when the fault was raised. */
  fleetId: string;
  robotId: string;
  code: string;
  /** The latest severity reported. */
  severity: FaultSeverity;
  component: string;
  message: string;
  state: FaultState;
  /** Gateway clock when the gateway first saw it (list order). */
  raisedAtMs: number;
  /** The robot's own raise time (robot clock), when it sent one. */
  robotRaisedAtMs: number | null;
  /** Gateway clock when a report no longer listed it; null while active. */
  clearedAtMs: number | null;
  /** Gateway clock of the last change of severity, component or message (raise time until then). */
  updatedAtMs: number;
  /** Why it cleared: `robot_report` (the robot stopped reporting it) or `robot_transferred` (the robot moved fleets). */
  clearedBy: 'robot_report' | 'robot_transferred' | null;
}

// The databases this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../../../store/lmdb.js' {
  interface StoreDatabases {
    faults: FaultRecord;
  }
}
