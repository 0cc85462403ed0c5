/**
 * `POST /v1/agent/control-robot` (spec: Agent API, robot control; Conventions 2 and 4; Limits).
 *
 * The request is strict: unknown fields, malformed UUIDs or a non-array `robot_ids` are 400. The ack
 * wait may be spelled `wait_for_ack` / `wait_for_ack_ms` or `waitForAck` / `waitForAckMs`; sending
 * more than one of the four is 400 (checked by the handler, which names the conflict).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DECLARATIONS, inPublishedOrder, type AnyCommandDeclaration } from '../../commands/catalog/index.js';
import { bodyProperties, fieldsOf, fieldsOfAll, type SurfaceField } from './command-fields.js';
import { ErrorBody, FreeForm, Uuid } from './common.js';
import { named } from './named.js';

/** Spec, Limits: targets per bulk robot command. */
export const MAX_TARGETS = 100;
/** Spec, Conventions 4 / Limits: the acknowledgement wait is capped at 30 s. */
export const MAX_ACK_WAIT_MS = 30_000;
/**
 * Largest control-robot body, in bytes: `arguments` at most 64 KiB of JSON (MAX_ARGUMENTS_BYTES,
 * src/commands/policy-limits.ts) or `settings` at most 100 keys of 128 and values of 1024 characters
 * (about 115 KB), plus 100 robot ids and the other fields, with room for escapes.
 */
export const CONTROL_ROBOT_MAX_BODY_BYTES = 128 * 1024;
/** Largest body of a request with no free-form field (stop-all, control-mission): a few short fields. */
export const SMALL_BODY_MAX_BYTES = 4 * 1024;

const WaitForAck = Type.Literal(true, { description: 'Wait for the robot agent\'s acknowledgement, up to 30 s.' });
const WaitForAckMs = Type.Integer({ minimum: 1, description: 'Wait up to this many ms for the acknowledgement; values above 30000 are capped at 30000.' });

/** Spec, Conventions 4: the optional ack wait, in any of its four spellings (at most one). */
export const AckWaitProps = {
  wait_for_ack: Type.Optional(WaitForAck),
  wait_for_ack_ms: Type.Optional(WaitForAckMs),
  waitForAck: Type.Optional(WaitForAck),
  waitForAckMs: Type.Optional(WaitForAckMs),
};

/** A mode name; the robot's advertised `allowed_modes` decide which are accepted. */
export const ModeName = Type.String({ minLength: 1, maxLength: 64, description: "A mode from the robot's advertised policy (`allowed_modes`), e.g. `autonomous`, `manual`, `docking`." });
/** An advertised action's name. */
export const ActionName = Type.String({ minLength: 1, maxLength: 128, description: "An action the robot advertises in its policy." });
/** Arguments of an invoked action, validated against the action's advertised JSON Schema. */
export const ActionArguments = named('ActionArguments', FreeForm({
  description: "Arguments object, validated by the gateway against the JSON Schema (2020-12) the robot advertised for the action; default `{}`.",
}));
/** Setting updates: key -> value, each checked against the robot's advertised SettingSpec. */
export const SettingValues = named('SettingValues', Type.Record(
  Type.String({ minLength: 1, maxLength: 128 }),
  Type.Union([Type.String({ maxLength: 1024 }), Type.Number(), Type.Boolean()]),
  {
    minProperties: 1,
    maxProperties: 100,
    description: 'key -> value. Each key must be an advertised setting; numbers must lie in its range, strings among its allowed values, booleans be booleans.',
  },
));
export const StopReason = Type.String({ maxLength: 256, description: 'Free text passed to the robot with the stop (default: the route name).' });

/** One action of control-robot: the command it sends and whether it targets every active robot of the fleet. */
export interface ControlRobotVerb {
  verb: string;
  command: AnyCommandDeclaration;
  fleetWide: boolean;
  /** The fields it takes, as control-robot publishes them. */
  fields: SurfaceField[];
}

/** Fields published with their own schema on control-robot (the rest: the declaration's). */
const OWN_FIELD_SCHEMAS: Record<string, TSchema> = { mode: ModeName, actionName: ActionName, arguments: ActionArguments, settings: SettingValues, reason: StopReason };

/** The commands control-robot offers (declarations with `controlRobot`), each verb once. */
export const CONTROL_ROBOT_VERBS: ReadonlyMap<string, ControlRobotVerb> = new Map(
  DECLARATIONS.filter((d) => d.controlRobot).flatMap((d) => {
    const fields = fieldsOf(d, OWN_FIELD_SCHEMAS);
    const fleetWide = d.controlRobot?.fleetWide;
    const verbs: ControlRobotVerb[] = [{ verb: d.action, command: d, fleetWide: false, fields }];
    if (fleetWide !== undefined) verbs.push({ verb: fleetWide, command: d, fleetWide: true, fields });
    return verbs.map((v) => [v.verb, v] as const);
  }),
);

/** The action enum in its published order (a new command follows the listed ones). */
export const CONTROL_ROBOT_ACTIONS: readonly string[] = inPublishedOrder(
  [...CONTROL_ROBOT_VERBS.keys()],
  ['start', 'stop', 'release', 'mode', 'invoke_action', 'update_settings', 'stop_all', 'force_reset'],
);
export type ControlRobotAction = string;

/** Every command field control-robot takes, in its published order; each belongs to the verbs whose command declares it. */
export const CONTROL_ROBOT_FIELDS: readonly SurfaceField[] = fieldsOfAll(
  [...CONTROL_ROBOT_VERBS.values()].map((v) => v.command),
  OWN_FIELD_SCHEMAS,
  ['mode', 'action_name', 'arguments', 'settings', 'reason'],
);

/** The `action` description: what each verb needs (published text first, then commands added since). */
function actionDescription(): string {
  const published = new Set(['start', 'stop', 'release', 'mode', 'invoke_action', 'update_settings', 'stop_all', 'force_reset']);
  const added = CONTROL_ROBOT_ACTIONS.filter((v) => !published.has(v)).map((v) => {
    const needs = CONTROL_ROBOT_VERBS.get(v)!.fields.filter((f) => f.required).map((f) => `\`${f.body}\``);
    return needs.length === 0 ? `, \`${v}\`` : `, \`${v}\` (needs ${needs.join(', ')})`;
  });
  return (
    '`stop` (offline: deferred), `start` (offline: fails for that robot with `unavailable`), `release` and `force_reset` ' +
    '(also need `operations:control`; `force_reset` exactly one robot), `mode` (needs `mode`), `invoke_action` (needs ' +
    '`action_name`, optional `arguments`), `update_settings` (needs `settings`), `stop_all` (no robot list: every active robot of the fleet)' +
    added.join('') + '.'
  );
}

export const ControlRobotBody = named('ControlRobotRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    action: Type.Unsafe<ControlRobotAction>({ type: 'string', enum: [...CONTROL_ROBOT_ACTIONS], description: actionDescription() }),
    robot_id: Type.Optional(Uuid),
    robot_ids: Type.Optional(Type.Array(Uuid, { maxItems: MAX_TARGETS, description: 'Combined with `robot_id`; duplicates count once; at most 100 targets in all.' })),
    ...bodyProperties(CONTROL_ROBOT_FIELDS, true),
    ...AckWaitProps,
  },
  { additionalProperties: false },
));
export type ControlRobotBody = Static<typeof ControlRobotBody>;

/** The spec's Delivery object. */
export const DeliveryObject = named('Delivery', Type.Object(
  {
    state: Type.Unsafe<'dispatched' | 'deferred' | 'agent_received' | 'agent_rejected' | 'timed_out'>({
      type: 'string',
      enum: ['dispatched', 'deferred', 'agent_received', 'agent_rejected', 'timed_out'],
      description: '`timed_out` means the wait elapsed: delivery observation only, not proof of failure.',
    }),
    commandId: Uuid,
    retryBudgetExhausted: Type.Boolean({ description: 'When false after a timeout, background resends may continue.' }),
    linkConflict: Type.Optional(
      Type.Literal(true, {
        description:
          'Present when the command was sent while the robot had a link conflict (two processes using its credentials, see ' +
          '`linkConflict` on the robot): `dispatched` / `agent_received` then mean one of those processes got it, which may not ' +
          'be the intended machine, and the other did not. docs/robot-link.md, "Link conflicts".',
      }),
    ),
  },
  { additionalProperties: false },
));
export type DeliveryObject = Static<typeof DeliveryObject>;

export const ControlRobotOutcome = named('RobotCommandOutcome', Type.Object(
  {
    robotId: Uuid,
    success: Type.Boolean(),
    delivery: Type.Optional(DeliveryObject),
    error: Type.Optional(
      Type.Object(
        { code: ErrorBody.properties.code, message: Type.String() },
        {
          additionalProperties: false,
          description:
            'Why this target failed: `not_found` (not a robot of the fleet), `unavailable` (offline for a command that is not kept, ' +
            'or backlog full), `conflict` (robot inactive: it accepts only stop; or a link conflict: only stop), `policy_rejected` (outside the robot\'s advertised ' +
            'policy, never sent; or rejected by the robot agent, then `delivery.state` is `agent_rejected`).',
        },
      ),
    ),
  },
  { additionalProperties: false },
));
export type ControlRobotOutcome = Static<typeof ControlRobotOutcome>;

export const ControlRobotResponse = named('ControlRobotResult', Type.Object(
  {
    success: Type.Boolean({ description: 'True when every target succeeded.' }),
    action: Type.Unsafe<ControlRobotAction>({ type: 'string', enum: [...CONTROL_ROBOT_ACTIONS] }),
    count: Type.Integer({ description: 'Number of targets (after de-duplication), one outcome each.' }),
    outcomes: Type.Array(ControlRobotOutcome),
    error: Type.Optional(Type.String({ description: 'On 207 and 502: summary message.' })),
    code: Type.Optional(Type.Unsafe<'partial_failure' | 'unavailable'>({ type: 'string', enum: ['partial_failure', 'unavailable'], description: 'On 207: `partial_failure`; on 502: `unavailable`.' })),
  },
  {
    additionalProperties: false,
    description:
      'One outcome per target robot, in request order. A target succeeds when its command is `dispatched`, ' +
      '`deferred` (robot offline: kept and sent on reconnect), `agent_received`, or `timed_out` (the wait ' +
      'elapsed; not proof of failure, resends may continue). It fails when the robot is not a robot of the ' +
      'fleet (`not_found`), is offline for a command that is not kept for later or its backlog is full (`unavailable`), ' +
      'is inactive (`conflict`), the command lies outside its advertised policy (`policy_rejected`, never sent), or the agent ' +
      'rejected it (`delivery.state` `agent_rejected`, error code `policy_rejected`). Status 200 when every target succeeded, 207 when ' +
      'some failed, 502 when all failed; 207 and 502 bodies also carry `error` and `code`.',
  },
));
export type ControlRobotResponse = Static<typeof ControlRobotResponse>;
