/**
 * Who else learns of faults (alerts raise one for a fault at error severity or worse): observers get
 * plain objects, never the stored record, and are called after the change is queued for LMDB, in
 * the order the changes happened. docs/faults.md.
 */
import type { FaultRecord, FaultSeverity } from './records.js';

/** A fault as observers see it: the record's identity and report, never the stored object. */
export type FaultNotice = Pick<FaultRecord, 'faultId' | 'orgId' | 'fleetId' | 'robotId' | 'code' | 'severity' | 'component' | 'message' | 'raisedAtMs'> & {
  /** Set on `cleared` only. */
  clearedAtMs?: number;
};

export interface FaultObserver {
  /** A fault became active (also after a restart-free robot transfer: raised again in the new fleet). */
  raised(fault: FaultNotice): void;
  /** A fault the robot no longer reports. */
  cleared(fault: FaultNotice): void;
  /** An active fault changed severity, component or message (e.g. a warning that became an error). */
  updated?(fault: FaultNotice, previousSeverity: FaultSeverity): void;
}

/** The observers' view of a record. */
export function faultNotice(f: FaultRecord): FaultNotice {
  const n: FaultNotice = {
    faultId: f.faultId,
    orgId: f.orgId,
    fleetId: f.fleetId,
    robotId: f.robotId,
    code: f.code,
    severity: f.severity,
    component: f.component,
    message: f.message,
    raisedAtMs: f.raisedAtMs,
  };
  if (f.clearedAtMs !== null) n.clearedAtMs = f.clearedAtMs;
  return n;
}
