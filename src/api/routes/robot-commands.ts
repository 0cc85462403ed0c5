/**
 * Nested robot command routes (spec: Nested robot commands and configuration, `robots:write`):
 * `…/robots/{robot_id}/go-to`, `/mode`, `/invoke-service`, `/settings` (one per command whose
 * declaration has `route`, src/commands/catalog), and `…/stop-all`.
 *
 * Single-robot routes answer with errors for the one robot (404 not in the fleet, 409 inactive, 422
 * outside its policy or rejected by its agent, 503 offline); stop-all follows the bulk 200 / 207 /
 * 502 rule of control-robot.
 */
import { requesterOfCaller } from '../../commands/requester.js';
import { requireFleet, requireOrg } from '../../auth/access.js';
import type { CommandService } from '../../commands/service.js';
import type { ActionAndArgs } from '../../commands/types.js';
import { apiError, type ErrorId } from '../../errors/catalog.js';
import { defineRoute } from '../define-route.js';
import type { RouteContext, RouteDef } from '../route.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { ackWaitMs, bulkStatus, dispatchAll, publicDelivery, type AckWaitFields } from '../command-dispatch.js';
import { fieldValues } from '../schemas/command-fields.js';
import {
  FleetPathParams,
  NESTED_COMMAND_ROUTES,
  RobotCommandResponse,
  RobotPathParams,
  StopAllBody,
  StopAllResponse,
} from '../schemas/robot-commands.js';
import { SMALL_BODY_MAX_BYTES, CONTROL_ROBOT_MAX_BODY_BYTES } from '../schemas/control-robot.js';
import { activeRobots } from '../fleet-scope.js';

export interface RobotCommandDeps {
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  commands: CommandService;
}

const SINGLE_ERRORS: ErrorId[] = [
  'forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'robot_not_found', 'robot_inactive', 'robot_offline', 'robot_link_conflict', 'policy_rejected',
  'agent_rejected', 'ack_wait_conflict', 'ack_waiters_full', 'outbox_full',
];

/** The nested command routes. */
export function robotCommandRoutes(deps: RobotCommandDeps): RouteDef[] {
  const { identity, commands } = deps;

  /** Sends one command to the path's robot and reports its delivery. */
  async function single(ctx: RouteContext<RobotPathParams, unknown, AckWaitFields>, command: ActionAndArgs): Promise<{ status: 200; body: RobotCommandResponse }> {
    const { params, auth } = ctx;
    requireOrg(auth, params.org_id);
    const fleet = requireFleet(identity, auth, params.fleet_id);
    const waitMs = ackWaitMs(ctx.body);
    if (waitMs !== null && commands.waiterRoom() < 1) throw apiError('ack_waiters_full');
    const s = commands.submit({ robotId: params.robot_id, fleetId: fleet.fleetId, orgId: fleet.orgId, ...command, requestedBy: requesterOfCaller(auth), awaitingAck: waitMs !== null });
    const d = waitMs === null ? s.delivery : await commands.waitForAck(s.commandId, waitMs, ctx.aborted);
    // Whatever the answer says (an ack too), the command must exist after a crash: src/commands/service.ts.
    await s.persisted;
    if (d.state === 'agent_rejected') {
      throw apiError('agent_rejected', { reason: d.rejectReason || 'no reason given' }, { details: { robotId: params.robot_id, delivery: publicDelivery(d) } });
    }
    const body: RobotCommandResponse = { success: true, robotId: params.robot_id, action: command.action, delivery: publicDelivery(d) };
    return { status: 200, body };
  }

  const base = '/v1/orgs/{org_id}/fleets/{fleet_id}';
  const ok = { 200: { description: 'Dispatched, deferred, received, or the wait timed out (see `delivery`).', schema: RobotCommandResponse } };
  const common = { method: 'POST', tags: ['Robot commands'], auth: 'robots:write', params: RobotPathParams, responses: ok, errors: SINGLE_ERRORS } as const;

  return [
    ...NESTED_COMMAND_ROUTES.map((n) =>
      defineRoute({
        ...common,
        path: `${base}/robots/{robot_id}/${n.route.segment}`,
        operationId: n.route.operationId,
        summary: n.route.summary,
        body: n.body,
        maxBodyBytes: n.route.largeBody === true ? CONTROL_ROBOT_MAX_BODY_BYTES : SMALL_BODY_MAX_BYTES,
      }).handle((ctx) => {
        const fields = fieldValues(ctx.body, n.fields);
        const args = n.command.toArgs(fields, { defaultReason: n.route.segment });
        return single(ctx, { action: n.command.action, args } as ActionAndArgs);
      }),
    ),
    defineRoute({
      method: 'POST',
      path: `${base}/stop-all`,
      operationId: 'fleetStopAll',
      summary: 'Pause every active robot of the fleet: one stop per robot (offline robots: deferred, sent on reconnect).',
      tags: ['Robot commands'],
      auth: 'robots:write',
      urgent: () => true,
      params: FleetPathParams,
      body: StopAllBody,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      responses: {
        200: { description: 'Every active robot\'s stop succeeded (count 0 when the fleet has none).', schema: StopAllResponse },
        207: { description: 'Some stops failed (code `partial_failure`).', schema: StopAllResponse },
        502: { description: 'Every stop failed (code `unavailable`).', schema: StopAllResponse },
      },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'ack_wait_conflict', 'ack_waiters_full', 'some_targets_failed', 'all_targets_failed'],
    }).handle(
      async (ctx) => {
        const { params, auth, body } = ctx;
        requireOrg(auth, params.org_id);
        const fleet = requireFleet(identity, auth, params.fleet_id);
        const waitMs = ackWaitMs(body);
        const reason = body.reason ?? 'stop-all';
        const outcomes = await dispatchAll(
          commands,
          activeRobots(identity, fleet.fleetId),
          (robotId) => ({ robotId, fleetId: fleet.fleetId, orgId: fleet.orgId, action: 'stop', args: { reason }, requestedBy: requesterOfCaller(auth) }),
          waitMs,
          ctx.aborted,
          true,
        );
        const response: StopAllResponse = { success: outcomes.every((o) => o.success), count: outcomes.length, outcomes };
        return bulkStatus(outcomes, response);
      },
    ),
  ];
}
