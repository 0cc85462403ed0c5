/**
 * `GET …/utilization` (nested under the fleet path; the interface names utilization under
 * `fleet:read` and shows no shape: this is the gateway's). docs/utilization.md.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';
import { named } from './named.js';

export const UtilizationParams = Type.Object({ org_id: Uuid, fleet_id: Uuid }, { additionalProperties: false });
export type UtilizationParams = Static<typeof UtilizationParams>;

export const UtilizationQuery = Type.Object(
  {
    from_ms: Type.Integer({ minimum: 0, description: 'Window start (Unix ms, inclusive).' }),
    to_ms: Type.Integer({ minimum: 1, description: 'Window end (Unix ms, exclusive); after from_ms, at most 24 hours later, not in the future (a value up to 60 s ahead is cut to now).' }),
    robot_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
export type UtilizationQuery = Static<typeof UtilizationQuery>;

const figures = {
  onlineMs: Type.Integer({ description: 'Time with telemetry (5-second slots with at least one sample).' }),
  runningMissionMs: Type.Integer({ description: 'Online time inside a mission run, not halted.' }),
  idleMs: Type.Integer({ description: 'Online time neither running a mission, halted nor charging.' }),
  chargingMs: Type.Integer({ description: 'Online time charging, outside missions.' }),
  pausedMs: Type.Integer({ description: 'Online time halted: e-stop pressed or mode `paused` / `stopped`.' }),
  offlineMs: Type.Integer({ description: 'Window time without telemetry.' }),
  missionsCompleted: Type.Integer({ description: 'Runs that completed inside the window.' }),
  missionsFailed: Type.Integer({ description: 'Runs that failed inside the window.' }),
  distanceM: Type.Number({ description: 'Metres travelled (mean speed of each online slot times its length), to 0.1 m.' }),
};

export const RobotUtilization = named('RobotUtilization', Type.Object(
  { robotId: Uuid, ...figures },
  { additionalProperties: false, description: 'onlineMs + offlineMs is the window; runningMissionMs + idleMs + chargingMs + pausedMs is onlineMs.' },
));

export const FleetUtilization = named('FleetUtilization', Type.Object(
  { robots: Type.Integer({ description: 'Robots counted.' }), ...figures },
  { additionalProperties: false, description: 'Sums over the robots.' },
));

export const UtilizationView = named('Utilization', Type.Object(
  {
    fleetId: Uuid,
    fromMs: Type.Integer(),
    toMs: Type.Integer({ description: 'The window\'s end as measured (to_ms, or now when to_ms was up to 60 s ahead).' }),
    slotMs: Type.Integer({ description: 'The time slot states are measured in (5000).' }),
    runsTruncated: Type.Boolean({ description: 'True when more than 20,000 runs surround the window: mission figures cover the newest 20,000.' }),
    fleet: FleetUtilization,
    robots: Type.Array(RobotUtilization, { description: 'Every robot of the fleet (or the one asked for), by id.' }),
  },
  { additionalProperties: false },
));
export type UtilizationView = Static<typeof UtilizationView>;
