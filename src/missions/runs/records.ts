/** Mission run records in LMDB (`runs` db); msgpack-safe only. */

export type RunState = 'starting' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled' | 'aborted';

/** One robot's execution of a template (spec: Mission run). */
export interface RunRecord {
  runId: string;
  orgId: string;
  fleetId: string;
  missionId: string;
  scheduleId: string | null;
  robotId: string;
  state: RunState;
  progressPct: number;
  stepIndex: number;
  remainingDistanceM: number | null;
  etaS: number | null;
  /** Robot-reported failure detail, or why a cancel/abort was requested. */
  detail: string | null;
  cancelRequested: 'cancel' | 'abort' | null;
  correlationId: string;
  startedAtMs: number;
  endedAtMs: number | null;
  lastReportAtMs: number | null;
  /** The fire that created the run (null for runs not started by a schedule). */
  fireKey: string | null;
  /** MissionStart command id (its delivery state is in the command service). */
  startCommandId: string | null;
  name: string;
}

// The databases this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../../store/lmdb.js' {
  interface StoreDatabases {
    runs: RunRecord;
  }
}
