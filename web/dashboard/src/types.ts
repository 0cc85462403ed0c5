/** The shapes of the gateway's answers the page reads (a subset of /openapi.json's schemas). */

export interface SessionInfo {
  session: { sessionId: string; orgId: string; permissions: string[]; user: { userId: string; email: string; role: string } };
  csrfToken: string;
}

export interface Fleet {
  fleetId: string;
  name: string;
}

export interface RobotView {
  id: string;
  name: string;
  active: boolean;
  online: boolean;
  lastSeenMs: number | null;
  latitude: number | null;
  longitude: number | null;
  headingDeg: number | null;
  speedMps: number | null;
  mode: string | null;
  estop: boolean | null;
  batteryPct: number | null;
  charging: boolean | null;
  missionState: string | null;
  missionProgressPct: number | null;
  healthLevel: string | null;
}

/** One live sample (docs/telemetry-stream.md), the fields the page shows. */
export interface LiveSample {
  op: 'sample';
  robot_id: string;
  ts_ms: number;
  latitude: number | null;
  longitude: number | null;
  pose: { heading_deg: number | null };
  velocity: { linear_mps: number | null };
  battery: { percent: number | null; charging: boolean };
  mode: string;
  estop: boolean;
  mission: { run_id: string; mission_state: string; mission_progress_pct: number | null } | null;
  health: { level: string };
}

export interface Alert {
  alertId: string;
  kind: string;
  state: 'open' | 'acknowledged' | 'resolved';
  severity: string;
  robotId: string | null;
  message: string;
  openedAtMs: number;
  acknowledgedAtMs: number | null;
  resolvedAtMs: number | null;
  updatedAtMs: number;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export type Geometry = { type: 'Polygon'; coordinates: number[][][] } | { type: 'MultiPolygon'; coordinates: number[][][][] };

export interface MapContext {
  features?: { feature_id: string; name: string; geometry: Geometry; locked: boolean }[];
  field_rules?: { directive_id: string; name: string; type: string; enabled: boolean; geometry: Geometry }[];
  objects?: { object_id: string; object_class: string; latitude: number; longitude: number; geometry: Geometry | null }[];
}

export interface Delivery {
  state: string;
  commandId: string;
  retryBudgetExhausted: boolean;
}

export interface RobotCommandOutcome {
  robotId: string;
  success: boolean;
  delivery?: Delivery;
  error?: { code: string; message: string };
}

export interface Command {
  commandId: string;
  robotId: string;
  action: string;
  state: string;
  retryBudgetExhausted: boolean;
  rejectReason: string | null;
}

export interface MissionRun {
  runId: string;
  missionId: string;
  scheduleId: string | null;
  robotId: string;
  name: string;
  state: string;
  missionProgressPct: number;
  correlationId: string;
  startedAtMs: number;
  endedAtMs: number | null;
}

export interface ScheduleRow {
  scheduleId: string;
  kind: 'mission' | 'command';
  template_mission_id: string | null;
  status: string;
  next_fire_at_ms: number | null;
  last_run_id: string | null;
  correlation_id: string;
  created_at_ms: number;
}

export interface TimelineEvent {
  eventId: string;
  atMs: number;
  kind: string;
  subject: { type: string; id: string };
}

/** GET /v1/robots/{robot_id}/telemetry/series (the history API). */
export interface Series {
  fromMs: number;
  toMs: number;
  bucketMs: number;
  fields: string[];
  points: { tsMs: number; count: number; values: Record<string, { min: number | null; max: number | null; avg: number | null }> }[];
}

/** GET /v1/robots/{robot_id}/telemetry/path: a GeoJSON Feature with a LineString ([lon, lat] pairs). */
export interface PathFeature {
  type: 'Feature';
  geometry: { type: 'LineString'; coordinates: number[][] };
}

/** GET /v1/orgs/{org_id}/users (admins). */
export interface User {
  userId: string;
  email: string;
  role: string;
  state: 'active' | 'disabled';
  createdAtMs: number;
}

/** GET /v1/orgs/{org_id}/api-keys: a key without its secret. */
export interface ApiKey {
  apiKeyId: string;
  fleetId: string | null;
  name: string | null;
  permissions: string[];
  state: 'active' | 'revoked' | 'expired';
  createdAtMs: number;
}
