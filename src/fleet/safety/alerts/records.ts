/**
 * Alerts' records in LMDB (`alerts` db: alertId -> AlertRecord) and the condition vocabulary.
 * msgpack-safe only. docs/alerts.md describes each kind, its subject and when it clears.
 */

/** The fleet conditions that need a person (docs/alerts.md, Kinds). */
export const ALERT_KINDS = ['fault', 'estop', 'robot_offline', 'battery_low', 'schedule_failed', 'command_retry_exhausted', 'link_conflict'] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** `open` -> `acknowledged` (a person, `fleet:write`) -> `resolved` (the condition cleared); `open` -> `resolved` too. */
export const ALERT_STATES = ['open', 'acknowledged', 'resolved'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

export const ALERT_SEVERITIES = ['warning', 'error', 'critical'] as const;
export type AlertSeverity = (typeof ALERT_SEVERITIES)[number];

/** What an alert is about. Robot kinds name the robot; a schedule or command alert names it. */
export interface AlertSubject {
  type: 'robot' | 'schedule' | 'command';
  id: string;
}

/** Why an alert was resolved (docs/alerts.md, Resolution). */
export const ALERT_RESOLUTIONS = ['condition_cleared', 'cleared_while_down', 'robot_inactive', 'subject_removed'] as const;
export type AlertResolution = (typeof ALERT_RESOLUTIONS)[number];

/** Who acknowledged an alert: the credential (API key id, or the session id of a person) and the person when there is one. */
export interface AlertActor {
  actorType: 'api_key' | 'user';
  apiKeyId: string;
  userId: string | null;
  email: string | null;
}

export interface AlertRecord {
  alertId: string;
  orgId: string;
  fleetId: string;
  kind: AlertKind;
  /**
   * One unresolved alert per (fleet, kind, condition key): the condition key is the subject id, and
   * for faults `<robotId>/<fault code>` (one alert per robot and code).
   */
  conditionKey: string;
  subject: AlertSubject;
  /** The robot the alert is about (robot kinds, faults, a command's robot); null for schedules. */
  robotId: string | null;
  severity: AlertSeverity;
  state: AlertState;
  /** One line for people, from the latest occurrence. */
  message: string;
  /** Kind-specific facts of the latest occurrence (docs/alerts.md). */
  details: Record<string, unknown>;
  /** Times the condition was raised while this alert was unresolved (1 when opened). */
  occurrences: number;
  openedAtMs: number;
  lastRaisedAtMs: number;
  acknowledgedAtMs: number | null;
  acknowledgedBy: AlertActor | null;
  /** The person's optional note with the acknowledgement. */
  acknowledgeNote: string | null;
  resolvedAtMs: number | null;
  resolution: AlertResolution | null;
  /** The timeline its events are on (GET /v1/events?correlation_id=…): the robot, the schedule's correlation id, or the alert itself. */
  correlationId: string;
  updatedAtMs: number;
}

// The databases this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../../../store/lmdb.js' {
  interface StoreDatabases {
    alerts: AlertRecord;
  }
}
