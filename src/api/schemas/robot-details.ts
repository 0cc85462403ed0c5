/**
 * `GET /v1/robots/{robot_id}/details` (spec: "Usage totals and latest per-device health"; fields not
 * shown there: these are the gateway's). docs/faults.md, docs/utilization.md.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { FaultView } from './faults.js';
import { named } from './named.js';
import { HealthLevel } from './robots.js';

export const DeviceHealthView = named('DeviceHealth', Type.Object(
  {
    deviceId: Type.String({ description: 'The robot\'s id for the device, e.g. `battery`, `drive_left`, `lidar_front`, `computer`.' }),
    kind: Type.Unsafe<'battery' | 'drive' | 'sensor' | 'computer' | 'other' | 'unspecified'>({
      type: 'string', enum: ['battery', 'drive', 'sensor', 'computer', 'other', 'unspecified'],
    }),
    level: HealthLevel,
    status: Type.String({ description: 'Short status word from the robot, e.g. `ok`, `overtemp`, `charging`, `degraded`.' }),
    metrics: Type.Array(
      Type.Object({ name: Type.String({ description: 'Reading name, unit in the name (`temperature_c`, `charge_pct`).' }), value: Type.Number() }, { additionalProperties: false }),
      { description: 'The device\'s readings in the latest report, by name.' },
    ),
  },
  { additionalProperties: false },
));
export type DeviceHealthView = Static<typeof DeviceHealthView>;

export const RobotUsageView = named('RobotUsage', Type.Object(
  {
    distanceM: Type.Number({ description: 'Metres travelled since the gateway first saw the robot (from its telemetry positions).' }),
    operatingS: Type.Integer({ description: 'Seconds the robot was online and reporting telemetry (operating hours = operatingS / 3600).' }),
    missionsCompleted: Type.Integer({ description: 'Runs of the robot that completed (counted as they finish; starting from the 90 days of run history kept when the gateway first measured the robot).' }),
    missionsFailed: Type.Integer({ description: 'Runs of the robot that failed, counted the same way.' }),
    firstSeenAtMs: Nullable(Type.Integer({ description: 'Gateway clock of the first telemetry seen from the robot; null before any.' })),
    lastSeenAtMs: Nullable(Type.Integer({ description: 'Gateway clock of the latest telemetry or health report; null before any.' })),
  },
  { additionalProperties: false },
));

export const RobotDetailsView = named('RobotDetails', Type.Object(
  {
    robotId: Uuid,
    name: Type.String(),
    fleetId: Uuid,
    online: Type.Boolean(),
    usage: RobotUsageView,
    health: Type.Object(
      {
        reportedAtMs: Nullable(Type.Integer({ description: 'Gateway clock of the latest health report; null before the first.' })),
        devices: Type.Array(DeviceHealthView, { description: 'Each device in the latest health report, in the robot\'s order.' }),
        activeFaults: Type.Array(FaultView, { description: 'The robot\'s active faults, newest first (at most 64).' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
));
export type RobotDetailsView = Static<typeof RobotDetailsView>;
