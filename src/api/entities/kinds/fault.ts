/**
 * Kind `fault`: faults robots reported (src/fleet/safety/faults), newest first by raise time; filters
 * active and robot_id.
 */
import { Type, type Static } from '@sinclair/typebox';
import { faultsOf } from '../../../fleet/safety/faults/faults.js';
import type { FaultRecord } from '../../../fleet/safety/faults/records.js';
import { Nullable, Uuid } from '../../schemas/common.js';
import { named } from '../../schemas/named.js';
import { defineKind } from '../kind.js';
import { AGENT_LIST_LIMIT, KindTag, RobotIdFilter } from './common.js';

export const FaultItem = named('FaultEntityItem', Type.Object(
  {
    kind: KindTag('fault'),
    fault_id: Uuid,
    robot_id: Uuid,
    code: Type.String(),
    severity: Type.Unsafe<FaultRecord['severity']>({ type: 'string', enum: ['info', 'warning', 'error', 'critical'] }),
    component: Type.String(),
    message: Type.String(),
    state: Type.Unsafe<FaultRecord['state']>({ type: 'string', enum: ['active', 'cleared'] }),
    raised_at_ms: Type.Integer(),
    cleared_at_ms: Nullable(Type.Integer()),
    updated_at_ms: Type.Integer(),
  },
  { additionalProperties: false },
));
type FaultItem = Static<typeof FaultItem>;

export const faultKind = defineKind<FaultRecord, FaultItem>({
  name: 'fault',
  permission: 'robots:read',
  describe: 'faults robots reported, newest first by raise time; filters active, robot_id',
  filters: {
    active: Type.Boolean({ description: 'Only active (true) or cleared (false) faults.' }),
    robot_id: RobotIdFilter,
  },
  limit: AGENT_LIST_LIMIT,
  item: FaultItem,
  source(deps, fleet, f) {
    const { active, robot_id: robotId } = f as { active?: boolean; robot_id?: string };
    return faultsOf(deps.store, { fleetId: fleet.fleetId, ...(robotId !== undefined ? { robotId } : {}), ...(active !== undefined ? { active } : {}) });
  },
  view: (_deps, x) => ({
    kind: 'fault',
    fault_id: x.faultId,
    robot_id: x.robotId,
    code: x.code,
    severity: x.severity,
    component: x.component,
    message: x.message,
    state: x.state,
    raised_at_ms: x.raisedAtMs,
    cleared_at_ms: x.clearedAtMs,
    updated_at_ms: x.updatedAtMs,
  }),
});
