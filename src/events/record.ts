/** The event log's record (`events` db); msgpack-safe only. */

/** One entry of a fleet's correlated timeline (GET /v1/events). */
export interface EventRecord {
  eventId: string;
  fleetId: string;
  correlationId: string;
  /** Global append order (monotonic), so a timeline reads back in order. */
  seq: number;
  atMs: number;
  /** e.g. "schedule.accepted", "schedule.pending", "run.robot_chosen", "run.progress", "operation.paused", "robot.link_conflict", "alert.opened". */
  kind: string;
  subject: { type: 'schedule' | 'run' | 'operation' | 'template' | 'feature' | 'command' | 'robot' | 'api_key' | 'user' | 'field_rule' | 'object' | 'alert'; id: string };
  data: Record<string, unknown>;
}

// The databases this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../store/lmdb.js' {
  interface StoreDatabases {
    events: EventRecord;
  }
}
