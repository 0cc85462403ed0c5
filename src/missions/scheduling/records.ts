/**
 * Scheduling's records in LMDB: schedules (`schedules` db) and their due occurrences (`fires`).
 * msgpack-safe only.
 */

import type { SchedulableAction, SchedulableFields } from '../../commands/catalog/index.js';

export type ScheduleStatus = 'scheduled' | 'pending' | 'deployed' | 'failed';

/** Recurrence, as the spec's schedule object. */
export type ScheduleKind = 'once' | { interval: { everySeconds: number } } | { cron: { expr: string } };

export interface ScheduleSpec {
  owner: string;
  timezone: string;
  startTimeMs: number;
  kind: ScheduleKind;
}

/**
 * The command a command schedule sends at each fire (`schedule-command`'s `command` without its
 * robots): the action and its request fields as its declaration names them (src/commands/catalog:
 * `mode`, `reason`, `actionName`, `arguments`, `settings`, ...), checked against the robot's policy
 * at each fire.
 */
export type ScheduledCommandRecord = { action: SchedulableAction } & SchedulableFields;

/** A registered mission run or command (spec: Schedule). */
export interface ScheduleRecord {
  scheduleId: string;
  orgId: string;
  fleetId: string;
  /** What fires: a mission template, or a non-mission command. */
  target: { type: 'mission'; missionId: string } | { type: 'command'; command: ScheduledCommandRecord };
  robotIds: string[];
  /** null: fire now (submit-job without schedule, deploy-mission). */
  schedule: ScheduleSpec | null;
  status: ScheduleStatus;
  lastFailureReason: string | null;
  lastFailureDetail: string | null;
  deploymentDeadlineMs: number | null;
  retryLimit: number;
  retryIntervalSecs: number;
  /** Next due fire, or null when none is left. */
  nextFireAtMs: number | null;
  cancelled: boolean;
  /** Shared by every event of this schedule's chain (accepted -> ... -> run done). */
  correlationId: string;
  /**
   * The API key the schedule acts as: its creator, or the key that re-bound it (edit-schedule
   * `rebind_to_caller`). Every fire's commands are sent, and audited, as this key, and only while it
   * may still act (acting-key.ts).
   */
  createdBy: { apiKeyId: string };
  /**
   * Set while the schedule is paused because its acting key may no longer act (`creator_key_invalid`):
   * no fire until it is re-bound. Absent on records written before this existed (= null).
   */
  pausedReason?: string | null;
  createdAtMs: number;
  updatedAtMs: number;
  /** Key (in `fires`) of the occurrence still being worked on, or null; at most one per schedule. */
  openFireKey: string | null;
  /** Occurrences that fell due (fired, skipped or missed). */
  firesTotal: number;
  /** Occurrences not worked on: one was still open, or they fell due while the gateway was down. */
  skippedFires: number;
  /** Run created by the latest deployed fire. */
  lastRunId: string | null;
}

/**
 * Phase of one due occurrence. `selecting`: looking for a robot; `sent`: MissionStart (or the
 * command) handed to the robot, waiting for its acknowledgement; `retry_wait`: an attempt failed and
 * another follows at `retryAtMs`; then `deployed` or `failed` (final), or `cancelled` with its schedule.
 */
export type FirePhase = 'selecting' | 'sent' | 'retry_wait' | 'deployed' | 'failed' | 'cancelled';

/** One due occurrence of a schedule (`fires` db, key `<scheduleId>/<dueAtMs 16 hex>`). */
export interface FireRecord {
  fireKey: string;
  scheduleId: string;
  orgId: string;
  fleetId: string;
  dueAtMs: number;
  /** When the fire was committed (lateness = firedAtMs - dueAtMs). */
  firedAtMs: number;
  phase: FirePhase;
  /** 0 for the first attempt; retries count up to the schedule's retryLimit. */
  attempt: number;
  /** End of the current attempt's deployment window (null: no deadline). */
  attemptDeadlineMs: number | null;
  retryAtMs: number | null;
  robotId: string | null;
  runId: string | null;
  commandIds: string[];
  failureReason: string | null;
  failureDetail: string | null;
  endedAtMs: number | null;
}

// The databases this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../../store/lmdb.js' {
  interface StoreDatabases {
    schedules: ScheduleRecord;
    fires: FireRecord;
  }
}
