/**
 * The robot record of the compatibility routes GET /v1/robots and GET /v1/robots/{robot_id}
 * (spec: Resources, Robot, "Compatibility view").
 *
 * The latest telemetry appears twice on purpose: flattened top-level fields for simple clients, and
 * the nested `motionTelemetry` / `statusTelemetry` objects the spec names. Before a robot's first
 * report every telemetry field is null and both nested objects are null.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { named } from './named.js';
import { Vda5050Identity } from './vda5050-identity.js';

export const RobotPathParams = Type.Object({ robot_id: Uuid }, { additionalProperties: false });
export type RobotPathParams = Static<typeof RobotPathParams>;

export const RobotListQuery = Type.Object({ fleet_id: Uuid }, { additionalProperties: false });
export type RobotListQuery = Static<typeof RobotListQuery>;

const NNumber = (description: string) => Nullable(Type.Number({ description }));

export const MotionTelemetry = named('MotionTelemetry', Type.Object(
  {
    tsMs: Type.Integer({ description: 'Robot clock of the sample (ms since epoch).' }),
    position: Type.Object(
      { latitude: Type.Number(), longitude: Type.Number(), elevationM: Type.Number() },
      { additionalProperties: false },
    ),
    pose: Type.Object(
      { xM: Type.Number(), yM: Type.Number(), zM: Type.Number(), headingDeg: Type.Number() },
      { additionalProperties: false },
    ),
    velocity: Type.Object({ linearMps: Type.Number(), angularDps: Type.Number() }, { additionalProperties: false }),
    gpsFix: Type.Integer({ description: 'GPS fix quality (0 none).' }),
    mapId: Type.String({ description: 'The map the pose is on (VDA 5050 `agvPosition.mapId`); empty when the robot names none.' }),
  },
  { additionalProperties: false },
));
export type MotionTelemetry = Static<typeof MotionTelemetry>;

export const MissionStatus = named('MissionStatus', Type.Object(
  {
    runId: Type.String(),
    missionState: Type.String(),
    missionProgressPct: Type.Number(),
    currentStepIndex: Type.Integer(),
    remainingDistanceM: Type.Number(),
    estimatedTimeRemainingS: Type.Number(),
  },
  { additionalProperties: false },
));

export const HealthLevel = named('HealthLevel', Type.Union([Type.Literal('unspecified'), Type.Literal('ok'), Type.Literal('warn'), Type.Literal('error')]));

export const StatusTelemetry = named('StatusTelemetry', Type.Object(
  {
    tsMs: Type.Integer({ description: 'Robot clock of the sample (ms since epoch).' }),
    mode: Type.String(),
    estop: Type.Boolean(),
    battery: Type.Object(
      { percent: Type.Number(), voltageV: Type.Number(), charging: Type.Boolean() },
      { additionalProperties: false },
    ),
    mission: Nullable(MissionStatus),
    health: Type.Object(
      { level: HealthLevel, faults: Type.Array(Type.String()), cpuTempC: Type.Number() },
      { additionalProperties: false },
    ),
    loads: Type.Object(
      {
        count: Type.Integer({ description: 'Loads on board (VDA 5050 `loads`); may be more than the ids listed.' }),
        ids: Type.Array(Type.String(), { description: 'The first 16 loads\' ids, in the robot\'s order; empty where it names none.' }),
        types: Type.Array(Type.String(), { description: 'Their types, at the same index as `ids`.' }),
        weightKg: Type.Number({ description: 'Total weight the robot reports, kg; 0 when it reports none.' }),
      },
      { additionalProperties: false, description: 'What the robot carries.' },
    ),
  },
  { additionalProperties: false },
));
export type StatusTelemetry = Static<typeof StatusTelemetry>;

export const LinkConflict = named('LinkConflict', Type.Object(
  {
    sinceMs: Type.Integer({ description: 'When the gateway detected it (Unix ms).' }),
    refusedConnections: Type.Integer({ description: 'Connections refused since then because another process held the link.' }),
    lastRefusedAtMs: Type.Integer({ description: 'When the latest one was refused (Unix ms).' }),
  },
  {
    additionalProperties: false,
    description:
      'Two live processes use this robot\'s credentials (a cloned token). One of them holds the link; connections from any ' +
      'other are refused, so commands reach only the holder, which may not be the intended machine: only stops and mission ' +
      'pause / cancel / abort are accepted, and their `delivery` carries `linkConflict: true`. Clears once no connection has ' +
      'been refused for 60 s (`FLEETGW_LINK_CONFLICT_CLEAR_MS`). docs/robot-link.md, "Link conflicts".',
  },
));
export type LinkConflict = Static<typeof LinkConflict>;

/** Operator labels: a small map of lower-case keys to short values (PATCH /v1/robots/{robot_id}). */
export const RobotLabels = named('RobotLabels', Type.Record(
  Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' }),
  Type.String({ maxLength: 128 }),
  { additionalProperties: false, maxProperties: 32, description: 'Up to 32 labels; keys 1-63 of a-z, 0-9, `.`, `_`, `-` (starting with a letter or digit), values up to 128 characters.' },
));

export const RobotView = named('RobotView', Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    fleetId: Uuid,
    active: Type.Boolean({ description: 'False while registered but not yet in the fleet working set.' }),
    labels: RobotLabels,
    notes: Nullable(Type.String({ description: 'Operator notes (PATCH /v1/robots/{robot_id}).' })),
    vda5050: Nullable(Vda5050Identity),
    online: Type.Boolean({ description: 'True while the robot holds a live link to this gateway.' }),
    linkConflict: Nullable(LinkConflict),
    capabilities: Type.Array(Type.String()),
    lastSeenMs: Nullable(Type.Integer({ description: 'Gateway clock when the latest telemetry arrived.' })),
    latitude: NNumber('Degrees (WGS 84).'),
    longitude: NNumber('Degrees (WGS 84).'),
    elevationM: NNumber('Metres.'),
    headingDeg: NNumber('Degrees clockwise from north.'),
    speedMps: NNumber('Linear speed, m/s.'),
    angularDps: NNumber('Turn rate, degrees/s.'),
    gpsFix: Nullable(Type.Integer()),
    mode: Nullable(Type.String()),
    estop: Nullable(Type.Boolean()),
    batteryPct: NNumber('Battery charge, percent.'),
    batteryVoltageV: NNumber('Battery voltage.'),
    charging: Nullable(Type.Boolean()),
    missionState: Nullable(Type.String({ description: 'Null when no mission is running.' })),
    missionProgressPct: NNumber('Null when no mission is running.'),
    healthLevel: Nullable(HealthLevel),
    motionTelemetry: Nullable(MotionTelemetry),
    statusTelemetry: Nullable(StatusTelemetry),
  },
  { additionalProperties: false },
));
export type RobotView = Static<typeof RobotView>;

export const RobotListResponse = named('RobotList', Type.Array(RobotView, { description: 'Every robot of the fleet, inactive ones included, ordered by id.' }));
export type RobotListResponse = Static<typeof RobotListResponse>;
