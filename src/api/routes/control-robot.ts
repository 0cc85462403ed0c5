/**
 * `POST /v1/agent/control-robot`: one independent command per target robot (spec: Agent API, robot
 * control). The request-wide rules are checked before anything is sent; per-robot problems (not in
 * the fleet, offline for a command that is not kept, inactive, outside the robot's policy, rejected
 * by the agent) fail that robot alone. See command-dispatch.ts for the two-phase dispatch.
 */
import { requesterOfCaller } from '../../commands/requester.js';
import { requireFleet, requireOrg, requirePermission } from '../../auth/access.js';
import type { CommandService, SubmitRequest } from '../../commands/service.js';
import type { ActionAndArgs } from '../../commands/types.js';
import { apiError } from '../../errors/catalog.js';
import { defineRoute, type ContextFor } from '../define-route.js';
import type { RouteDef } from '../route.js';
import type { Store } from '../../store/lmdb.js';
import { ackWaitMs, bulkStatus, dispatchAll } from '../command-dispatch.js';
import { activeRobots } from '../fleet-scope.js';
import { CONTROL_ROBOT_MAX_BODY_BYTES, ControlRobotBody, ControlRobotResponse, MAX_TARGETS, type ControlRobotAction } from '../schemas/control-robot.js';

export { ackWaitMs } from '../command-dispatch.js';

export interface ControlRobotDeps {
  store: Store;
  commands: CommandService;
}

/** Body fields that belong to one action only. */
const FIELD_OF: Record<'mode' | 'action_name' | 'arguments' | 'settings', ControlRobotAction> = {
  mode: 'mode',
  action_name: 'invoke_action',
  arguments: 'invoke_action',
  settings: 'update_settings',
};

/**
 * `robot_id` then `robot_ids`, duplicates removed, order kept.
 * @throws ApiError `no_targets` / `too_many_targets`
 */
export function targetsOf(body: ControlRobotBody): string[] {
  const ids = new Set<string>();
  if (body.robot_id !== undefined) ids.add(body.robot_id);
  for (const id of body.robot_ids ?? []) ids.add(id);
  if (ids.size === 0) throw apiError('no_targets');
  if (ids.size > MAX_TARGETS) throw apiError('too_many_targets', { max: MAX_TARGETS });
  return [...ids];
}

/**
 * The command every target gets, from the action and its fields.
 * @throws ApiError `action_field_missing` / `action_field_unexpected`
 */
export function commandOf(body: ControlRobotBody): ActionAndArgs {
  for (const [field, owner] of Object.entries(FIELD_OF)) {
    if (body[field as keyof typeof FIELD_OF] !== undefined && body.action !== owner) {
      throw apiError('action_field_unexpected', { action: body.action, field });
    }
  }
  if (body.reason !== undefined && body.action !== 'stop' && body.action !== 'stop_all') {
    throw apiError('action_field_unexpected', { action: body.action, field: 'reason' });
  }
  switch (body.action) {
    case 'stop':
    case 'stop_all':
      return { action: 'stop', args: { reason: body.reason ?? `control-robot ${body.action}` } };
    case 'start':
    case 'release':
    case 'force_reset':
      return { action: body.action, args: {} };
    case 'mode':
      if (body.mode === undefined) throw apiError('action_field_missing', { action: 'mode', field: 'mode' });
      return { action: 'mode', args: { mode: body.mode } };
    case 'invoke_action':
      if (body.action_name === undefined) throw apiError('action_field_missing', { action: 'invoke_action', field: 'action_name' });
      return { action: 'invoke_action', args: { name: body.action_name, arguments: (body.arguments ?? {}) } };
    case 'update_settings':
      if (body.settings === undefined) throw apiError('action_field_missing', { action: 'update_settings', field: 'settings' });
      return { action: 'update_settings', args: { values: body.settings } };
  }
}

/** The control-robot route. */
export function controlRobotRoutes(deps: ControlRobotDeps): RouteDef[] {
  const { store, commands } = deps;

  async function handle(ctx: ContextFor<undefined, undefined, typeof ControlRobotBody>): Promise<{ status: 200 | 207 | 502; body: ControlRobotResponse }> {
    const { body, auth } = ctx;
    requireOrg(auth, body.org_id);
    const fleet = requireFleet(store, auth, body.fleet_id);
    if (body.action === 'release' || body.action === 'force_reset') requirePermission(auth, 'operations:control');
    const waitMs = ackWaitMs(body);
    const command = commandOf(body);
    let targets: string[];
    if (body.action === 'stop_all') {
      if (body.robot_id !== undefined || body.robot_ids !== undefined) throw apiError('stop_all_no_targets');
      targets = activeRobots(store, fleet.fleetId);
    } else {
      targets = targetsOf(body);
      if (body.action === 'force_reset' && targets.length !== 1) throw apiError('force_reset_one_target');
    }
    const build = (robotId: string): SubmitRequest =>
      ({ robotId, fleetId: fleet.fleetId, orgId: fleet.orgId, ...command, requestedBy: requesterOfCaller(auth) });
    const outcomes = await dispatchAll(commands, targets, build, waitMs, ctx.aborted, body.action === 'stop' || body.action === 'stop_all');
    const response: ControlRobotResponse = { success: outcomes.every((o) => o.success), action: body.action, count: outcomes.length, outcomes };
    return bulkStatus(outcomes, response);
  }

  return [
    defineRoute({
      method: 'POST',
      path: '/v1/agent/control-robot',
      // stop, stop_all and the other actions move or halt robots; a repeat is a second command.
      effect: { changes: 'destructive', idempotent: false },
      operationId: 'controlRobot',
      summary:
        'Send a robot command to up to 100 robots of a fleet (or, with stop_all, every active one), one independent command ' +
        'per robot, optionally waiting for acknowledgements. Answers 200 / 207 / 502 with a per-robot outcome.',
      tags: ['Agent API'],
      auth: 'robots:write',
      body: ControlRobotBody,
      maxBodyBytes: CONTROL_ROBOT_MAX_BODY_BYTES,
      // Past the key's rate limit a stop still goes through (a busy automation key can always halt).
      urgent: (b) => b.action === 'stop' || b.action === 'stop_all',
      responses: {
        200: { description: 'Every target succeeded (also: stop_all on a fleet with no active robot, count 0).', schema: ControlRobotResponse },
        207: { description: 'Some targets failed (code `partial_failure`); see outcomes.', schema: ControlRobotResponse },
        502: { description: 'Every target failed (code `unavailable`); see outcomes.', schema: ControlRobotResponse },
      },
      errors: [
        'forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'forbidden_permission', 'ack_wait_conflict', 'too_many_targets', 'no_targets',
        'force_reset_one_target', 'stop_all_no_targets', 'action_field_missing', 'action_field_unexpected', 'ack_waiters_full',
        'some_targets_failed', 'all_targets_failed',
      ],
    }).handle(handle),
  ];
}
