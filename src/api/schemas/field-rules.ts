/**
 * Field rules: the `upsert-field-rule` Agent tool, the field rule actions of `control-feature`, and
 * the nested REST routes `…/fleets/{fleet_id}/field-rules`. The interface names only `directive_id`
 * and `field_rule`; the rest is the gateway's (docs/field-rules.md). Requests are snake_case (Agent
 * API bodies), the rule as returned is camelCase (a resource's representation).
 */
import { Type, type Static } from '@sinclair/typebox';
import { FIELD_RULE_TYPES, MAX_RULES_PER_FLEET, SPEED_LIMIT_BOUNDS, WAIT_S_BOUNDS } from '../../fleet/safety/field-rules/index.js';
import { Nullable, Uuid } from './common.js';
import { GeometrySchema } from './features.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';

const RuleType = named('FieldRuleType', Type.Unsafe<(typeof FIELD_RULE_TYPES)[number]>({
  type: 'string',
  enum: [...FIELD_RULE_TYPES],
  description: '`speed_limit`: robots never drive faster than `max_speed_mps` inside the zone. `keep_out`: robots never enter the zone. ' +
    '`stop_and_wait`: a robot entering the zone comes to a halt there and stays stopped for `wait_s` seconds, then continues.',
}));

const MAX_SPEED = { minimum: SPEED_LIMIT_BOUNDS.min, maximum: SPEED_LIMIT_BOUNDS.max };
const WAIT = { minimum: WAIT_S_BOUNDS.min, maximum: WAIT_S_BOUNDS.max };
const Name = Type.String({ minLength: 1, maxLength: 200 });

export const FieldRuleParametersInput = named('FieldRuleParametersRequest', Type.Object(
  {
    max_speed_mps: Type.Optional(Type.Number({ ...MAX_SPEED, description: 'speed_limit only (required there): the cap, m/s.' })),
    wait_s: Type.Optional(Type.Integer({ ...WAIT, description: 'stop_and_wait only (required there): seconds a robot stays stopped after entering.' })),
  },
  { additionalProperties: false, description: 'Which members a type takes: speed_limit `max_speed_mps`; stop_and_wait `wait_s`; keep_out none (`{}`).' },
));

export const FieldRuleInput = named('FieldRuleRequest', Type.Object(
  {
    name: Name,
    type: RuleType,
    geometry: GeometrySchema,
    parameters: FieldRuleParametersInput,
    enabled: Type.Optional(Type.Boolean({ description: 'Default true on create; kept on edit when omitted.' })),
  },
  { additionalProperties: false, description: 'The whole rule: an edit replaces name, type, geometry and parameters.' },
));
export type FieldRuleInput = Static<typeof FieldRuleInput>;

export const UpsertFieldRuleBody = named('UpsertFieldRuleRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    directive_id: Type.Optional(Uuid),
    field_rule: FieldRuleInput,
  },
  { additionalProperties: false, description: 'Without `directive_id`: create (the server mints the id). With it: edit that rule.' },
));
export type UpsertFieldRuleBody = Static<typeof UpsertFieldRuleBody>;

export const FieldRuleView = named('FieldRule', Type.Object(
  {
    directiveId: Uuid,
    name: Type.String(),
    type: RuleType,
    geometry: GeometrySchema,
    parameters: named('FieldRuleParameters', Type.Object(
      {
        maxSpeedMps: Type.Optional(Type.Number({ description: 'speed_limit: the cap, m/s.' })),
        waitS: Type.Optional(Type.Integer({ description: 'stop_and_wait: seconds stopped after entering.' })),
      },
      { additionalProperties: false },
    )),
    enabled: Type.Boolean({ description: 'Only enabled rules are sent to robots.' }),
    ruleSetVersion: Type.Integer({ description: 'The fleet\'s rule set version that this rule\'s last change produced.' }),
    createdAtMs: Type.Integer(),
    updatedAtMs: Type.Integer(),
  },
  { additionalProperties: false },
));
export type FieldRuleView = Static<typeof FieldRuleView>;

const RobotDelivery = named('FieldRuleRobotDelivery', Type.Object(
  {
    robotId: Uuid,
    outcome: Type.Unsafe<'applied' | 'rejected' | 'timed_out' | 'disconnected'>({
      type: 'string',
      enum: ['applied', 'rejected', 'timed_out', 'disconnected'],
      description: '`applied`: the robot acknowledged this rule set version (or a newer one). `rejected`: it answered that it could not apply it and keeps its previous set (`error`). ' +
        '`timed_out`: no answer within the wait (5 s by default). `disconnected`: its link ended before it answered; it receives the current set when it reconnects.',
    }),
    error: Nullable(Type.String()),
  },
  { additionalProperties: false },
));

export const FieldRuleDeliveryView = named('FieldRuleDelivery', Type.Object(
  {
    ruleSetVersion: Type.Integer({ description: 'The fleet\'s rule set version sent to the robots.' }),
    robots: Type.Array(RobotDelivery, { description: 'Every robot of the fleet online when the set was sent. Offline robots receive the current set when they connect, before any command.' }),
  },
  { additionalProperties: false },
));
export type FieldRuleDeliveryView = Static<typeof FieldRuleDeliveryView>;

export const FieldRuleChangeResult = named('FieldRuleChangeResult', Type.Object(
  { success: Type.Literal(true), fieldRule: FieldRuleView, delivery: FieldRuleDeliveryView },
  { additionalProperties: false, description: 'Saved and applied by every online robot of the fleet.' },
));
export type FieldRuleChangeResult = Static<typeof FieldRuleChangeResult>;

export const FieldRulePartialResult = named('FieldRulePartialFailure', Type.Object(
  {
    error: Type.String(),
    code: Type.Literal('partial_failure'),
    details: FieldRuleDeliveryView,
    fieldRule: FieldRuleView,
  },
  { additionalProperties: false, description: 'Saved (the change is not rolled back), but not every online robot applied it; `details.robots` lists each online robot\'s outcome.' },
));
export type FieldRulePartialResult = Static<typeof FieldRulePartialResult>;

export const FieldRulePathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid, directive_id: Uuid }, { additionalProperties: false });
export type FieldRulePathParams = Static<typeof FieldRulePathParams>;

export const FIELD_RULES_LIMIT: ListLimit = { default: 100, max: MAX_RULES_PER_FLEET };

export const FieldRuleListQuery = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Only enabled (true) or disabled (false) rules.' })),
    type: Type.Optional(RuleType),
    limit: Type.Optional(LimitParam(FIELD_RULES_LIMIT)),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);
export type FieldRuleListQuery = Static<typeof FieldRuleListQuery>;

export const FieldRuleListResponse = Page('FieldRuleList', FieldRuleView, 'Ordered by directiveId.');
export type FieldRuleListResponse = Static<typeof FieldRuleListResponse>;
