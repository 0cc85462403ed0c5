/**
 * `POST /v1/agent/control-robot`: one independent command per target robot. Every command is handed
 * to the command service (and, for an online robot, written to its stream) before any ack is awaited,
 * so one slow robot never delays another's stop.
 */
import { requireFleet, requireOrg } from '../../auth/access.js';
import type { CommandService, Submitted } from '../../commands/service.js';
import { isAcknowledged, type Delivery } from '../../commands/types.js';
import { apiError, ApiError } from '../../errors/catalog.js';
import type { HandlerResult, RouteContext, RouteDef } from '../../http/types.js';
import type { Store } from '../../store/lmdb.js';
import {
  ControlRobotBody,
  ControlRobotResponse,
  MAX_ACK_WAIT_MS,
  MAX_TARGETS,
  type ControlRobotOutcome,
} from '../schemas/control-robot.js';

export interface ControlRobotDeps {
  store: Store;
  commands: CommandService;
}

/** Actions this version puts on the wire; the rest answer `action_not_supported`. */
const IMPLEMENTED = new Set<string>(['stop']);

/**
 * The ack wait asked for, in ms (capped at 30 s), or null for none.
 * @throws ApiError `ack_wait_conflict` when more than one of the four spellings is present
 */
export function ackWaitMs(body: ControlRobotBody): number | null {
  const given = [body.wait_for_ack, body.wait_for_ack_ms, body.waitForAck, body.waitForAckMs].filter((v) => v !== undefined);
  if (given.length > 1) throw apiError('ack_wait_conflict');
  const v = given[0];
  if (v === undefined) return null;
  return v === true ? MAX_ACK_WAIT_MS : Math.min(v, MAX_ACK_WAIT_MS);
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

function failed(robotId: string, err: ApiError, delivery?: Delivery): ControlRobotOutcome {
  const out: ControlRobotOutcome = { robotId, success: false, error: { code: err.code, message: err.message } };
  if (delivery) out.delivery = publicDelivery(delivery);
  return out;
}

function publicDelivery(d: Delivery): ControlRobotOutcome['delivery'] {
  return { state: d.state, commandId: d.commandId, retryBudgetExhausted: d.retryBudgetExhausted };
}

/** The spec's 200 / 207 / 502 rule over per-robot outcomes. */
function summarize(action: ControlRobotBody['action'], outcomes: ControlRobotOutcome[]): HandlerResult {
  const bad = outcomes.filter((o) => !o.success).length;
  const body: ControlRobotResponse = { success: bad === 0, action, count: outcomes.length, outcomes };
  if (bad === 0) return { status: 200, body };
  const err = bad === outcomes.length
    ? apiError('all_targets_failed')
    : apiError('some_targets_failed', { failed: bad, count: outcomes.length });
  return { status: err.status, body: { ...body, error: err.message, code: err.code } };
}

/** The control-robot route. */
export function controlRobotRoutes(deps: ControlRobotDeps): RouteDef[] {
  const { store, commands } = deps;

  async function handle(ctx: RouteContext<Record<string, string>, Record<string, unknown>, ControlRobotBody>): Promise<HandlerResult> {
    const { body, auth } = ctx;
    requireOrg(auth, body.org_id);
    const fleet = requireFleet(store, auth, body.fleet_id);
    if (!IMPLEMENTED.has(body.action)) throw apiError('action_not_supported', { action: body.action });
    const waitMs = ackWaitMs(body);
    const targets = targetsOf(body);
    // Refuse the whole request before sending anything it could not then report on.
    if (waitMs !== null && commands.waiterRoom() < targets.length) throw apiError('ack_waiters_full');

    // Phase 1: every dispatch, synchronously, before any wait.
    const outcomes: ControlRobotOutcome[] = [];
    const submitted: { at: number; robotId: string; s: Submitted }[] = [];
    for (const robotId of targets) {
      const robot = store.robots.get(robotId);
      if (!robot || robot.fleetId !== fleet.fleetId) {
        outcomes.push(failed(robotId, apiError('robot_not_found', { robotId })));
        continue;
      }
      try {
        const s = commands.submit({
          robotId,
          fleetId: fleet.fleetId,
          orgId: fleet.orgId,
          action: 'stop',
          args: { reason: 'control-robot stop' },
          requestedBy: { apiKeyId: auth.apiKeyId },
        });
        submitted.push({ at: outcomes.length, robotId, s });
        outcomes.push({ robotId, success: true, delivery: publicDelivery(s.delivery) });
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        outcomes.push(failed(robotId, err));
      }
    }

    // Phase 2: acks (raced against the client going away inside waitForAck), then durability: the
    // answer leaves only once each command is acknowledged by its robot or committed to LMDB.
    const finals = await Promise.all(
      submitted.map(({ s }) => (waitMs === null ? Promise.resolve(s.delivery) : commands.waitForAck(s.commandId, waitMs, ctx.aborted))),
    );
    await Promise.all(submitted.filter((_, i) => !isAcknowledged(finals[i]?.state ?? 'dispatched')).map(({ s }) => s.persisted));

    submitted.forEach(({ at, robotId }, i) => {
      const d = finals[i];
      if (!d) return;
      outcomes[at] = d.state === 'agent_rejected'
        ? failed(robotId, apiError('agent_rejected', { reason: d.rejectReason || 'no reason given' }), d)
        : { robotId, success: true, delivery: publicDelivery(d) };
    });
    return summarize(body.action, outcomes);
  }

  return [
    {
      method: 'POST',
      path: '/v1/agent/control-robot',
      operationId: 'controlRobot',
      summary: 'Send a robot command (stop) to one or more robots of a fleet, optionally waiting for acknowledgement.',
      tags: ['Agent API'],
      auth: 'robots:write',
      body: ControlRobotBody,
      responses: {
        200: { description: 'Every target succeeded.', schema: ControlRobotResponse },
        207: { description: 'Some targets failed (code `partial_failure`); see outcomes.', schema: ControlRobotResponse },
        502: { description: 'Every target failed (code `unavailable`); see outcomes.', schema: ControlRobotResponse },
      },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'action_not_supported', 'ack_wait_conflict', 'too_many_targets', 'no_targets', 'ack_waiters_full'],
      handler: handle,
    },
  ];
}
