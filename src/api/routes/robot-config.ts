/**
 * `GET`/`POST …/robots/{robot_id}/config` and `…/onboard-settings`: request/response operations.
 * The command goes through the command service like any other (policy check: the robot must have
 * opted in; outbox; audit); the answer waits for the robot's CommandResult. A write succeeds only
 * once the robot reported success. When the robot does not report in time the answer is 503 with
 * the commandId, and the operation stays observable at `GET /v1/robot-commands/{command_id}`.
 */
import { requesterOfCaller } from '../../commands/requester.js';
import { requireFleet, requireOrg } from '../../auth/access.js';
import type { CommandService } from '../../commands/service.js';
import { DECLARATIONS, declarationOf, type CommandAction } from '../../commands/catalog/index.js';
import { deliveryOf, type ActionAndArgs, type JsonObject } from '../../commands/types.js';
import { apiError, type ErrorId } from '../../errors/catalog.js';
import { defineRoute } from '../define-route.js';
import type { RouteContext, RouteDef } from '../route.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { publicDelivery } from '../command-dispatch.js';
import { RobotPathParams } from '../schemas/robot-commands.js';
import { ConfigReadQuery, ConfigResponse, ConfigWriteBody, DEFAULT_RESULT_WAIT_MS } from '../schemas/robot-config.js';
import { CONTROL_ROBOT_MAX_BODY_BYTES } from '../schemas/control-robot.js';

export interface RobotConfigDeps {
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  commands: CommandService;
}

type Kind = CommandAction;

const ERRORS: ErrorId[] = [
  'forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'robot_not_found', 'robot_inactive', 'robot_offline', 'robot_link_conflict', 'policy_rejected',
  'remote_config_not_enabled', 'agent_rejected', 'robot_result_failed', 'robot_result_timeout', 'ack_waiters_full', 'outbox_full',
];

/** The command of an exchange: a read (`values` null) or a write of `values`. */
function exchangeCommand(action: Kind, values: JsonObject | null): ActionAndArgs {
  const fields = values === null ? {} : { values };
  return { action, args: declarationOf(action).toArgs(fields, { defaultReason: action }) } as ActionAndArgs;
}

/** The config and onboard-settings routes. */
export function robotConfigRoutes(deps: RobotConfigDeps): RouteDef[] {
  const { identity, commands } = deps;

  async function exchange(ctx: RouteContext<RobotPathParams>, action: Kind, values: JsonObject | null, timeoutMs: number | undefined): Promise<{ status: 200; body: ConfigResponse }> {
    const { params, auth } = ctx;
    requireOrg(auth, params.org_id);
    const fleet = requireFleet(identity, auth, params.fleet_id);
    if (commands.resultWaiterRoom() < 1) throw apiError('ack_waiters_full');
    const robotId = params.robot_id;
    const s = commands.submit({
      robotId, fleetId: fleet.fleetId, orgId: fleet.orgId, ...exchangeCommand(action, values), requestedBy: requesterOfCaller(auth),
    });
    const w = await commands.waitForResult(s.commandId, timeoutMs ?? DEFAULT_RESULT_WAIT_MS, ctx.aborted);
    await s.persisted;
    const rec = w.record;
    if (rec.state === 'agent_rejected') {
      throw apiError('agent_rejected', { reason: rec.rejectReason || 'no reason given' }, { details: { commandId: rec.commandId, delivery: publicDelivery(deliveryOf(rec)) } });
    }
    if (w.timedOut || !rec.result) {
      throw apiError('robot_result_timeout', { robotId, commandId: rec.commandId }, { details: { commandId: rec.commandId, delivery: publicDelivery(deliveryOf(rec, true)) } });
    }
    if (!rec.result.success) {
      throw apiError('robot_result_failed', { robotId, reason: rec.result.error || 'no reason given' }, { details: { commandId: rec.commandId, error: rec.result.error } });
    }
    const body: ConfigResponse = { robotId, commandId: rec.commandId, values: rec.result.payload ?? {} };
    return { status: 200, body };
  }

  const routesFor = (segment: string, action: Kind, what: string, ids: { read: string; update: string }): RouteDef[] => {
    // The exchange's request fields are `values` (null: a read); the declaration turns them into arguments.
    const path = `/v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/${segment}`;
    const ok = { 200: { description: `The ${what} as the robot reported it.`, schema: ConfigResponse } };
    return [
      defineRoute({
        method: 'GET',
        path,
        operationId: ids.read,
        summary: `Read the robot's ${what} (asks the robot; needs its opt-in).`,
        tags: ['Robot configuration'],
        auth: 'robots:read',
        params: RobotPathParams,
        query: ConfigReadQuery,
        responses: ok,
        errors: ERRORS,
      }).handle((ctx) => exchange(ctx, action, null, ctx.query.timeout_ms)),
      defineRoute({
        method: 'POST',
        path,
        operationId: ids.update,
        summary: `Update the robot's ${what}; succeeds only after the robot reports the result.`,
        tags: ['Robot configuration'],
        auth: 'robots:write',
        params: RobotPathParams,
        body: ConfigWriteBody,
        maxBodyBytes: CONTROL_ROBOT_MAX_BODY_BYTES,
        responses: ok,
        errors: ERRORS,
      }).handle((ctx) => exchange(ctx, action, ctx.body.values, ctx.body.timeout_ms)),
    ];
  };

  // One GET and one POST per command whose declaration has `exchange` (src/commands/catalog).
  return DECLARATIONS.flatMap((d) =>
    d.exchange ? routesFor(d.exchange.segment, d.action as Kind, d.exchange.what, { read: d.exchange.readOperationId, update: d.exchange.updateOperationId }) : [],
  );
}
