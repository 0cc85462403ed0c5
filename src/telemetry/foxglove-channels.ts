/**
 * The channels the Foxglove endpoint advertises (docs/foxglove.md): three per online robot, each a
 * topic under `/robots/<robot id>/`, JSON-encoded, with a JSON Schema. Position and pose use the
 * schemas Foxglove itself publishes (@foxglove/schemas), so its Map and 3D panels understand them
 * without configuration; the robot's status has no Foxglove schema, so it has one of our own here.
 * Shared by the decode workers (which write the messages) and the hub (which advertises them).
 */
import { LocationFix, PoseInFrame } from '@foxglove/schemas/jsonschema.js';

/** Kinds of channel per robot; the bit is the kind's flag in the decode task's Foxglove mask. */
export const FOXGLOVE_KINDS = [
  { kind: 'location', bit: 1, schemaName: 'foxglove.LocationFix' },
  { kind: 'pose', bit: 2, schemaName: 'foxglove.PoseInFrame' },
  { kind: 'status', bit: 4, schemaName: 'fleetgw.RobotStatus' },
] as const;
export type FoxgloveKind = (typeof FOXGLOVE_KINDS)[number]['kind'];
/** Index of each kind in {@link FOXGLOVE_KINDS} (the `kind` slot of a Foxglove batch's index). */
export const KIND_INDEX: Readonly<Record<FoxgloveKind, number>> = { location: 0, pose: 1, status: 2 };

const nullableNumber = { type: ['number', 'null'] };
const time = {
  type: 'object',
  title: 'time',
  properties: { sec: { type: 'integer', minimum: 0 }, nsec: { type: 'integer', minimum: 0, maximum: 999_999_999 } },
  required: ['sec', 'nsec'],
};

/** JSON Schema of the status channel: battery, state (mode, e-stop, health) and mission of one sample. */
export const ROBOT_STATUS_SCHEMA = {
  title: 'fleetgw.RobotStatus',
  description: 'Battery, operating state and mission of one fleet-gateway robot at one telemetry sample',
  type: 'object',
  properties: {
    timestamp: { ...time, description: 'Sample time (robot clock)' },
    robot_id: { type: 'string' },
    fleet_id: { type: 'string' },
    battery: {
      type: 'object',
      properties: { percent: nullableNumber, voltage_v: nullableNumber, charging: { type: 'boolean' } },
      required: ['percent', 'voltage_v', 'charging'],
    },
    mode: { type: 'string', description: 'Operating mode as the robot reports it (e.g. autonomous, manual, idle)' },
    estop: { type: 'boolean', description: 'Emergency stop pressed' },
    gps_fix: { type: ['integer', 'null'] },
    health: {
      type: 'object',
      properties: {
        level: { enum: ['unspecified', 'ok', 'warn', 'error'] },
        faults: { type: 'array', items: { type: 'string' } },
        cpu_temp_c: nullableNumber,
      },
      required: ['level', 'faults', 'cpu_temp_c'],
    },
    mission: {
      description: 'null while the robot runs no mission',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          properties: {
            run_id: { type: 'string' },
            mission_state: { type: 'string' },
            progress_pct: nullableNumber,
            step_index: { type: ['integer', 'null'] },
            remaining_distance_m: nullableNumber,
            eta_s: nullableNumber,
          },
          required: ['run_id', 'mission_state', 'progress_pct', 'step_index', 'remaining_distance_m', 'eta_s'],
        },
      ],
    },
  },
  required: ['timestamp', 'robot_id', 'fleet_id', 'battery', 'mode', 'estop', 'gps_fix', 'health', 'mission'],
} as const;

/** Schema text per kind, as the `advertise` message carries it (serialized once). */
export const FOXGLOVE_SCHEMA_TEXT: Readonly<Record<FoxgloveKind, string>> = {
  location: JSON.stringify(LocationFix),
  pose: JSON.stringify(PoseInFrame),
  status: JSON.stringify(ROBOT_STATUS_SCHEMA),
};

/** The topic of a robot's channel of `kind`. */
export function foxgloveTopic(robotId: string, kind: FoxgloveKind): string {
  return `/robots/${robotId}/${kind}`;
}
