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
import type { IdentityReads } from '../../store/identity-reads.js';
import { ackWaitMs, bulkStatus, dispatchAll } from '../command-dispatch.js';
import { activeRobots } from '../fleet-scope.js';
import { fieldValues } from '../schemas/command-fields.js';
import {
  CONTROL_ROBOT_FIELDS,
  CONTROL_ROBOT_MAX_BODY_BYTES,
  CONTROL_ROBOT_VERBS,
  ControlRobotBody,
  ControlRobotResponse,
  MAX_TARGETS,
  type ControlRobotVerb,
} from '../schemas/control-robot.js';

export { ackWaitMs } from '../command-dispatch.js';

export interface ControlRobotDeps {
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  commands: CommandService;
}

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

/** The verb a body names (the schema's enum admits only these). */
function verbOf(body: ControlRobotBody): ControlRobotVerb {
  const v = CONTROL_ROBOT_VERBS.get(body.action);
  if (!v) throw apiError('action_field_unexpected', { action: body.action, field: 'action' });
  return v;
}

/**
 * The command every target gets, from the action and its fields (the fields each command takes are
 * its declaration's, src/commands/catalog).
 * @throws ApiError `action_field_missing` / `action_field_unexpected`
 */
export function commandOf(body: ControlRobotBody): ActionAndArgs {
  const v = verbOf(body);
  const own = new Set(v.fields.map((f) => f.body));
  const b = body as Record<string, unknown>;
  for (const f of CONTROL_ROBOT_FIELDS) {
    if (b[f.body] !== undefined && !own.has(f.body)) throw apiError('action_field_unexpected', { action: body.action, field: f.body });
  }
  for (const f of v.fields) {
    if (f.required && b[f.body] === undefined) throw apiError('action_field_missing', { action: body.action, field: f.body });
  }
  const args = v.command.toArgs(fieldValues(b, v.fields), { defaultReason: `control-robot ${body.action}` });
  return { action: v.command.action, args } as ActionAndArgs;
}

/** Verbs whose command always overtakes a backlog (stop, stop_all): they pass a key's rate limit and a full waiter registry. */
const URGENT_VERBS = new Set([...CONTROL_ROBOT_VERBS.values()].filter((v) => v.command.urgent === true).map((v) => v.verb));

/** The control-robot route. */
export function controlRobotRoutes(deps: ControlRobotDeps): RouteDef[] {
  const { identity, commands } = deps;

  async function handle(ctx: ContextFor<undefined, undefined, typeof ControlRobotBody>): Promise<{ status: 200 | 207 | 502; body: ControlRobotResponse }> {
    const { body, auth } = ctx;
    requireOrg(auth, body.org_id);
    const fleet = requireFleet(identity, auth, body.fleet_id);
    const verb = verbOf(body);
    const permission = verb.command.controlRobot?.permission;
    if (permission !== undefined) requirePermission(auth, permission);
    const waitMs = ackWaitMs(body);
    const command = commandOf(body);
    let targets: string[];
    if (verb.fleetWide) {
      if (body.robot_id !== undefined || body.robot_ids !== undefined) throw apiError('stop_all_no_targets');
      targets = activeRobots(identity, fleet.fleetId);
    } else {
      targets = targetsOf(body);
      if (verb.command.controlRobot?.oneTarget === true && targets.length !== 1) throw apiError('force_reset_one_target');
    }
    const build = (robotId: string): SubmitRequest =>
      ({ robotId, fleetId: fleet.fleetId, orgId: fleet.orgId, ...command, requestedBy: requesterOfCaller(auth) });
    const outcomes = await dispatchAll(commands, targets, build, waitMs, ctx.aborted, URGENT_VERBS.has(body.action));
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
      urgent: (b) => URGENT_VERBS.has(b.action),
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
