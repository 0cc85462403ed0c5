/**
 * The command policy the simulated robots advertise in their Hello: what the gateway lets through
 * to them (modes, actions with argument schemas, setting ranges, the depot as go-to area, and the
 * request/response opt-ins). src/sim/commands.ts applies exactly these.
 */
import { create } from '@bufbuild/protobuf';
import { CommandPolicySchema, SettingSpec_Kind, type CommandPolicy } from '../gen/fleetgw/v1/robot_link_pb.js';
import { DEPOT, toLatLon } from './geo.js';

export const SIM_MODES = ['autonomous', 'manual', 'docking'] as const;

/** Advertised actions and their argument schemas (JSON Schema 2020-12). */
export const SIM_ACTIONS: Record<string, object | null> = {
  beep: {
    type: 'object',
    properties: { durationMs: { type: 'integer', minimum: 1, maximum: 5000 } },
    required: ['durationMs'],
    additionalProperties: false,
  },
  set_lights: {
    type: 'object',
    properties: { on: { type: 'boolean' }, color: { enum: ['white', 'amber', 'red'] } },
    required: ['on'],
    additionalProperties: false,
  },
  // No arguments.
  dump_diagnostics: null,
};

/** Builds the simulator's policy; `optIn` false leaves remote configuration and onboard settings off. */
export function simPolicy(optIn = true): CommandPolicy {
  const h = DEPOT.halfSizeM;
  const corners = [toLatLon(-h, -h), toLatLon(h, -h), toLatLon(h, h), toLatLon(-h, h)];
  return create(CommandPolicySchema, {
    allowedModes: [...SIM_MODES],
    actions: Object.entries(SIM_ACTIONS).map(([name, schema]) => ({ name, argumentsSchemaJson: schema ? JSON.stringify(schema) : '' })),
    settings: [
      { key: 'max_speed_mps', kind: SettingSpec_Kind.NUMBER, hasRange: true, min: 0.1, max: 3 },
      { key: 'lights_enabled', kind: SettingSpec_Kind.BOOLEAN },
      { key: 'obstacle_sensitivity', kind: SettingSpec_Kind.STRING, allowedValues: ['low', 'medium', 'high'] },
    ],
    goToArea: { ring: corners.map((c) => ({ latitude: c.latitude, longitude: c.longitude })) },
    remoteConfig: optIn,
    onboardSettings: optIn,
  });
}
