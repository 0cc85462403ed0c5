/**
 * A robot's live status as the Agent read tools show it (query-entities items, get-entity, the map
 * context): the link (online), whether it could take work now (available), its run, and the latest
 * telemetry snapshot's essentials. Read fresh on every call: LMDB reads are memory-mapped and the
 * run tracker and link registry are in memory.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { RobotRecord } from '../../store/records.js';
import type { TelemetrySnapshot } from '../../telemetry/sample/index.js';
import { Nullable, Uuid } from '../schemas/common.js';
import { named } from '../schemas/named.js';
import type { KindDeps } from './kind.js';

export const RobotLiveStatus = named('RobotLiveStatus', Type.Object(
  {
    online: Type.Boolean({ description: 'Connected on the robot link now.' }),
    available: Type.Boolean({ description: 'Active in the fleet, online and not running a mission: could take work now.' }),
    run_id: Nullable(Uuid),
    mission_state: Nullable(Type.String({ description: 'State of the run it is executing (as `MissionRun.state`); null when none.' })),
    mission_progress_pct: Nullable(Type.Number()),
    battery_pct: Nullable(Type.Number()),
    charging: Nullable(Type.Boolean()),
    mode: Nullable(Type.String()),
    estop: Nullable(Type.Boolean()),
    health_level: Nullable(Type.String({ description: 'ok, warn, error or unspecified.' })),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    elevation_m: Nullable(Type.Number()),
    last_seen_ms: Nullable(Type.Integer({ description: 'When the gateway received its latest telemetry (Unix ms); null before any.' })),
  },
  { additionalProperties: false, description: 'Live status; telemetry fields are null before the robot\'s first report.' },
));
export type RobotLiveStatus = Static<typeof RobotLiveStatus>;

/** The robot's latest telemetry snapshot, or undefined before its first report. */
export function snapshotOf(deps: Pick<KindDeps, 'snapshots'>, robotId: string): TelemetrySnapshot | undefined {
  return deps.snapshots.latest(robotId);
}

/** The robot's live status. */
export function liveStatus(deps: KindDeps, r: Readonly<RobotRecord>, snap = snapshotOf(deps, r.robotId)): RobotLiveStatus {
  const online = deps.link.isOnline(r.robotId);
  const run = deps.missions.tracker.activeRunOf(r.robotId);
  return {
    online,
    available: r.active && online && run === undefined,
    run_id: run?.runId ?? null,
    mission_state: run?.state ?? null,
    mission_progress_pct: run?.progressPct ?? null,
    battery_pct: snap?.battery.percent ?? null,
    charging: snap?.battery.charging ?? null,
    mode: snap?.mode ?? null,
    estop: snap?.estop ?? null,
    health_level: snap?.health.level ?? null,
    latitude: snap?.latitude ?? null,
    longitude: snap?.longitude ?? null,
    elevation_m: snap?.elevationM ?? null,
    last_seen_ms: snap?.receivedAtMs ?? null,
  };
}

/**
 * The merged lists, per record object: the record cache hands out one object per stored version and
 * the tracker one array per Hello, so an entry is reused exactly while both are unchanged (and goes
 * with its record object).
 */
const NONE: readonly string[] = [];
const merged = new WeakMap<Readonly<RobotRecord>, { advertised: readonly string[]; capabilities: readonly string[] }>();

/**
 * The robot's capabilities, the one set every read and the dispatcher use: those set at registration
 * plus those its latest Hello advertised (its `capabilities` and its policy's actions), sorted.
 * Read-only.
 */
export function robotCapabilities(deps: Pick<KindDeps, 'missions'>, r: Readonly<RobotRecord>): readonly string[] {
  const got = deps.missions.tracker.advertisedCapabilities(r.robotId);
  const advertised = got.length === 0 ? NONE : got; // a fresh [] for a robot not seen yet
  const hit = merged.get(r);
  if (hit !== undefined && hit.advertised === advertised) return hit.capabilities;
  const capabilities = [...new Set([...r.capabilities, ...advertised])].sort();
  merged.set(r, { advertised, capabilities });
  return capabilities;
}
