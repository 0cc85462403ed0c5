/**
 * `POST /v1/agent/control-operation`: the fleet operation's actions (src/missions/catalog/operation-control.ts
 * documents each). The permission depends on the action, so the route takes any valid key and checks
 * the action's permission before anything else is read.
 *
 * Status: 200; 202 when the change committed but the live runtime has not adopted it yet; 207
 * `partial_failure` when the state changed but pausing/resuming/aborting the runs in flight failed.
 */
import { pino, type Logger } from 'pino';
import type { EventLog } from '../../events/index.js';
import { requireFleet, requireOrg, requirePermission } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import { ACTION_PERMISSION, controlOperation } from '../../missions/catalog/operation-control.js';
import type { AdvertisedCapabilities } from '../../missions/catalog/robot-capabilities.js';
import type { OperationRuntime } from '../../missions/catalog/runtime.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { ControlOperationBody, ControlOperationResponse } from '../schemas/control-operation.js';
import { templateView } from '../template-view.js';
import { SMALL_BODY_MAX_BYTES } from '../schemas/control-robot.js';

/** The control-operation route. */
export function controlOperationRoutes(deps: { store: Store; identity: IdentityReads; events: EventLog; runtime: OperationRuntime; advertised: AdvertisedCapabilities; log?: Logger }): RouteDef[] {
  const { store, identity, events, runtime, advertised } = deps;
  const log = deps.log ?? pino({ enabled: false });
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/agent/control-operation',
      // pause, reset, restart, abort_missions, unassign.
      effect: { changes: 'destructive', idempotent: false },
      operationId: 'controlOperation',
      summary: 'Control the fleet\'s operation: start, pause, reset, restart, reset_step, abort_missions, enable/disable a mission, assign/unassign a robot, reset_decomposers.',
      tags: ['Agent API'],
      auth: 'any',
      body: ControlOperationBody,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      responses: {
        200: { description: 'Done; the live operation adopted the change.', schema: ControlOperationResponse },
        202: { description: 'Committed; the live operation has not adopted it yet (runtimeSync `pending`).', schema: ControlOperationResponse },
        207: { description: 'The state changed but pausing, resuming or aborting the runs in flight failed (code `partial_failure`).', schema: ControlOperationResponse },
      },
      errors: [
        'forbidden_permission', 'forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'operation_not_found', 'operation_mismatch', 'operation_state_conflict',
        'missing_field', 'template_not_found', 'robot_not_found', 'robot_not_active_member', 'robot_missing_capability', 'roster_last_robot',
        'some_targets_failed',
      ],
    }).handle(
      async ({ auth, body, nowMs }) => {
        requirePermission(auth, ACTION_PERMISSION[body.action]);
        requireOrg(auth, body.org_id);
        const fleet = requireFleet(identity, auth, body.fleet_id);
        const out = await controlOperation(
          { store, events, runtime, advertised, log },
          fleet.fleetId,
          {
            action: body.action,
            ...(body.operation_id !== undefined ? { operationId: body.operation_id } : {}),
            ...(body.mission_id !== undefined ? { missionId: body.mission_id } : {}),
            ...(body.robot_id !== undefined ? { robotId: body.robot_id } : {}),
          },
          nowMs,
        );
        const runsFailed = out.runs !== undefined && out.runs.attached && !out.runs.applied;
        const pending = out.runtimeSync.runtimeSync === 'pending';
        const res: ControlOperationResponse = {
          success: !runsFailed && !pending,
          action: body.action,
          operation: { operation_id: out.operation.operationId, name: out.operation.name, state: out.operation.state, epoch: out.operation.epoch },
          changed: out.changed,
          persistenceState: 'committed',
          runtimeSync: out.runtimeSync.runtimeSync,
          ...(out.runtimeSync.runtimeSync === 'pending' ? { runtimeSyncError: out.runtimeSync.runtimeSyncError } : {}),
          ...(out.template ? { template: templateView(out.template) } : {}),
          ...(out.features ? { features: out.features } : {}),
          ...(out.runs ? { runs: out.runs } : {}),
        };
        if (runsFailed) {
          const err = apiError('some_targets_failed', { failed: out.runs?.failures?.length ?? 1, count: out.runs?.count ?? 1 });
          return { status: 207, body: { ...res, error: `The operation is ${out.operation.state}, but the runs in flight were not ${out.runs?.effect === 'abort' ? 'aborted' : out.runs?.effect === 'pause' ? 'paused' : 'resumed'}: ${out.runs?.detail ?? ''}`, code: err.code } };
        }
        return { status: pending ? 202 : 200, body: res };
      },
    ),
  ];
}
