/**
 * The channels the Foxglove endpoint advertises (docs/foxglove.md): three per online robot, each a
 * topic under `/robots/<robot id>/`, JSON-encoded, with a JSON Schema. Position and pose use the
 * schemas Foxglove itself publishes (@foxglove/schemas), so its Map and 3D panels understand them
 * without configuration; the robot's status has no Foxglove schema, so it has one of our own here.
 * Shared by the decode workers (which write the messages) and the hub (which advertises them); only
 * the hub needs the schema texts, and @foxglove/schemas' JSON Schema module (all of its schemas in one
 * 300 KB file) is loaded on the first advertise, so neither the workers nor a gateway without Foxglove
 * users pay for it at start-up.
 */
import { createRequire } from 'node:module';
import type * as FoxgloveJsonSchemas from '@foxglove/schemas/jsonschema.js';

/** Kinds of channel per robot; the bit is the kind's flag in the decode task's Foxglove mask. */
export const FOXGLOVE_KINDS = [
  { kind: 'location', bit: 1, schemaName: 'foxglove.LocationFix' },
  { kind: 'pose', bit: 2, schemaName: 'foxglove.PoseInFrame' },
  { kind: 'status', bit: 4, schemaName: 'fleetgw.RobotStatus' },
] as const;
export type FoxgloveKind = (typeof FOXGLOVE_KINDS)[number]['kind'];
/** Index of each kind in {@link FOXGLOVE_KINDS} (the `kind` slot of a Foxglove batch's index). */
export const KIND_INDEX: Readonly<Record<FoxgloveKind, number>> = { location: 0, pose: 1, status: 2 };

const time = {
  type: 'object',
  title: 'time',
  properties: { sec: { type: 'integer', minimum: 0 }, nsec: { type: 'integer', minimum: 0, maximum: 999_999_999 } },
  required: ['sec', 'nsec'],
};
const optional = (description: string, type: 'number' | 'integer' = 'number') => ({ type, description: `${description}; absent when the robot reported no finite value` });

/**
 * JSON Schema of the status channel: battery, state (mode, e-stop, health) and mission of one sample.
 * Written in the subset Foxglove turns into message definitions for its panels: one plain `type` per
 * field, no `null` and no unions (its JSON Schema reader refuses them). So a value that is unknown
 * (a non-finite number, no mission) is left out instead of sent as null.
 */
export const ROBOT_STATUS_SCHEMA = {
  title: 'fleetgw.RobotStatus',
  description: 'Battery, operating state and mission of one fleet-gateway robot at one telemetry sample',
  type: 'object',
  properties: {
    timestamp: { ...time, description: 'Sample time (robot clock)' },
    robot_id: { type: 'string' },
    fleet_id: { type: 'string' },
    mode: { type: 'string', description: 'Operating mode as the robot reports it (e.g. autonomous, manual, idle)' },
    estop: { type: 'boolean', description: 'Emergency stop pressed' },
    battery: {
      type: 'object',
      properties: { charging: { type: 'boolean' }, percent: optional('State of charge, %'), voltage_v: optional('Battery voltage, V') },
      required: ['charging'],
    },
    health: {
      type: 'object',
      properties: {
        level: { type: 'string', description: 'One of unspecified, ok, warn, error' },
        faults: { type: 'array', items: { type: 'string' }, description: 'Active fault codes' },
        cpu_temp_c: optional('CPU temperature, degrees Celsius'),
      },
      required: ['level', 'faults'],
    },
    gps_fix: optional('GNSS fix type as the robot reports it', 'integer'),
    mission: {
      type: 'object',
      description: 'The mission run in progress; absent while the robot runs none',
      properties: {
        run_id: { type: 'string' },
        mission_state: { type: 'string' },
        mission_progress_pct: optional('Progress, %'),
        current_step_index: optional('Index of the current step', 'integer'),
        remaining_distance_m: optional('Distance left, m'),
        estimated_time_remaining_s: optional('Estimated time to completion, s'),
      },
      required: ['run_id', 'mission_state'],
    },
  },
  required: ['timestamp', 'robot_id', 'fleet_id', 'mode', 'estop', 'battery', 'health'],
} as const;

let schemaTexts: Readonly<Record<FoxgloveKind, string>> | undefined;

/** The schema text of `kind` as the `advertise` message carries it (serialized once, on first use). */
export function foxgloveSchemaText(kind: FoxgloveKind): string {
  if (schemaTexts === undefined) {
    // A CommonJS module: require() loads it synchronously, here and only here.
    const { LocationFix, PoseInFrame } = createRequire(import.meta.url)('@foxglove/schemas/jsonschema.js') as typeof FoxgloveJsonSchemas;
    schemaTexts = { location: JSON.stringify(LocationFix), pose: JSON.stringify(PoseInFrame), status: JSON.stringify(ROBOT_STATUS_SCHEMA) };
  }
  return schemaTexts[kind];
}

/** The topic of a robot's channel of `kind`. */
export function foxgloveTopic(robotId: string, kind: FoxgloveKind): string {
  return `/robots/${robotId}/${kind}`;
}
