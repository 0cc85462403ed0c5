/**
 * What a VDA 5050 robot advertises, in the gateway's terms: its capabilities and the command policy
 * the gateway checks commands against before they are sent (docs/vda5050.md, "Mapping").
 *
 * - Instant-scope actions of the factsheet become `invoke_action` actions, their parameters the
 *   argument schema (VDA 5050 parameters are key/value pairs: one property per key).
 * - Go-to targets must lie in the site's map square (`MapFrame.goToRing`).
 * - Modes, settings, remote configuration and onboard settings have no VDA 5050 counterpart: the
 *   policy offers none, so those commands are refused (422 `policy_rejected`); `force_reset` is
 *   refused the same way through `unsupported`.
 */
import { create } from '@bufbuild/protobuf';
import { CommandPolicySchema, type CommandPolicy } from '../../gen/fleetgw/v1/robot_link_pb.js';
import type { MapFrame } from './map-frame.js';
import type { VdaFactsheet } from './messages.js';

/** The gateway commands a VDA 5050 link carries for every robot (docs/vda5050.md). */
const LINK_CAPABILITIES = ['vda5050', 'stop', 'start', 'release', 'go_to', 'invoke_action'];

/** Commands with no VDA 5050 counterpart, with the reason a caller is given. */
export const UNSUPPORTED_ACTIONS: Readonly<Record<string, string>> = {
  force_reset: 'VDA 5050 defines no reset action; clear the robot\'s errors on the robot',
  mode: 'a VDA 5050 robot sets its operating mode itself',
  update_settings: 'VDA 5050 has no settings message',
  config: 'VDA 5050 has no remote configuration',
  onboard_settings: 'VDA 5050 has no onboard settings',
};

const JSON_TYPES: Record<string, string> = { BOOL: 'boolean', NUMBER: 'number', FLOAT: 'number', INTEGER: 'integer', STRING: 'string', OBJECT: 'object', ARRAY: 'array' };

/** The capabilities the robot advertises: the link's commands plus each action type of its factsheet. */
export function capabilitiesOf(factsheet: VdaFactsheet | null): string[] {
  const names = new Set(LINK_CAPABILITIES);
  for (const a of factsheet?.agvActions ?? []) if (a.actionType.length > 0 && a.actionType.length <= 128) names.add(a.actionType);
  return [...names].slice(0, 64);
}

/** The command policy of a robot (its factsheet's instant actions; the map square for go-to). */
export function policyOf(factsheet: VdaFactsheet | null, frame: MapFrame): CommandPolicy {
  const actions = (factsheet?.agvActions ?? [])
    .filter((a) => a.actionScopes.includes('INSTANT'))
    .map((a) => {
      const properties: Record<string, unknown> = {};
      for (const p of a.parameters) properties[p.key] = JSON_TYPES[p.valueDataType] !== undefined ? { type: JSON_TYPES[p.valueDataType] } : {};
      const schema = { type: 'object', properties, required: a.parameters.filter((p) => !p.isOptional).map((p) => p.key), additionalProperties: false };
      return { name: a.actionType, argumentsSchemaJson: JSON.stringify(schema) };
    });
  return create(CommandPolicySchema, { actions, goToArea: { ring: frame.goToRing() } });
}
