/**
 * Faults (docs/faults.md): `GET …/faults` (nested under the fleet path), `GET …/faults/{fault_id}`
 * and `GET /v1/robots/{robot_id}/faults`. The interface names the record but shows none of its
 * fields; these are the gateway's.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';

export const FAULTS_LIMIT: ListLimit = { default: 100, max: 500 };

export const FaultSeverity = named('FaultSeverity', Type.Unsafe<'info' | 'warning' | 'error' | 'critical'>({
  type: 'string',
  enum: ['info', 'warning', 'error', 'critical'],
  description: 'As the robot reports it, lowest to highest. Alerts are raised for `error` and `critical`.',
}));

export const FaultView = named('Fault', Type.Object(
  {
    faultId: Uuid,
    robotId: Uuid,
    fleetId: Uuid,
    code: Type.String({ description: 'The robot\'s machine-readable code, e.g. `drive_left_overtemp`; one active fault per robot and code.' }),
    severity: FaultSeverity,
    component: Type.String({ description: 'The device or subsystem at fault, e.g. `drive_left` (a device id of the robot\'s details when it is one).' }),
    message: Type.String({ description: 'The robot\'s human-readable detail (latest reported).' }),
    state: Type.Unsafe<'active' | 'cleared'>({ type: 'string', enum: ['active', 'cleared'], description: '`active` while the robot\'s health reports list the code; `cleared` once a report no longer does.' }),
    raisedAtMs: Type.Integer({ description: 'Gateway clock when the fault first appeared (list order).' }),
    robotRaisedAtMs: Nullable(Type.Integer({ description: 'The robot\'s own raise time (robot clock), when it sent one.' })),
    updatedAtMs: Type.Integer({ description: 'Last change of severity, component or message (the raise time until then).' }),
    clearedAtMs: Nullable(Type.Integer({ description: 'Gateway clock when a report no longer listed it; null while active.' })),
    clearedBy: Nullable(Type.Unsafe<'robot_report' | 'robot_transferred'>({
      type: 'string',
      enum: ['robot_report', 'robot_transferred'],
      description: '`robot_report`: the robot stopped reporting it; `robot_transferred`: the robot moved to another fleet (a still reported fault is raised again there).',
    })),
  },
  { additionalProperties: false, description: 'One occurrence of a fault on a robot, from raise to clear (docs/faults.md).' },
));
export type FaultView = Static<typeof FaultView>;

export const FaultPage = Page('FaultPage', FaultView, 'Newest first (by raise time).');
export type FaultPage = Static<typeof FaultPage>;

const ActiveFilter = Type.Boolean({ description: '`true`: active faults only; `false`: cleared faults only; absent: both.' });

export const FleetFaultsParams = Type.Object({ org_id: Uuid, fleet_id: Uuid }, { additionalProperties: false });
export type FleetFaultsParams = Static<typeof FleetFaultsParams>;

export const FleetFaultsQuery = Type.Object(
  {
    active: Type.Optional(ActiveFilter),
    robot_id: Type.Optional(Uuid),
    limit: Type.Optional(LimitParam(FAULTS_LIMIT)),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);
export type FleetFaultsQuery = Static<typeof FleetFaultsQuery>;

export const FaultPathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid, fault_id: Uuid }, { additionalProperties: false });
export type FaultPathParams = Static<typeof FaultPathParams>;

export const RobotFaultsQuery = Type.Object(
  {
    active: Type.Optional(ActiveFilter),
    limit: Type.Optional(LimitParam(FAULTS_LIMIT)),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);
export type RobotFaultsQuery = Static<typeof RobotFaultsQuery>;
