/**
 * Field rules (docs/field-rules.md): zones with a constraint robots obey, delivered over the robot
 * link. What other modules use: the records and their reads (`fieldRulesOf` is the keyset list of
 * a fleet's rules with `enabled` / `type` filters, `getFieldRule` / `requireFieldRule` read one),
 * the delivery service and the change service the routes call.
 */
export type { FieldRuleParameters, FieldRuleRecord, FieldRuleType } from './records.js';
export { FIELD_RULE_TYPES } from './records.js';
export {
  fieldRulesOf, getFieldRule, requireFieldRule, ruleSetVersion, enabledFieldRules,
  MAX_RULES_PER_FLEET, SPEED_LIMIT_BOUNDS, WAIT_S_BOUNDS,
  type FieldRuleFilter, type FieldRuleInput,
} from './rules.js';
export { currentRuleSet, toRuleSet } from './rule-set.js';
export {
  FieldRuleDelivery, unacknowledged,
  type FieldRuleDeliveryOutcome, type RobotRuleDelivery, type RuleSetDeliveryReport, type RobotRuleSetState,
} from './delivery.js';
export { FieldRuleService, type FieldRuleChange } from './service.js';
