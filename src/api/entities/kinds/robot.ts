/**
 * Kind `robot`: robots active in the fleet, by id, each with its capabilities and live status;
 * `get-entity` adds identity, the capability descriptors of its advertised policy, its current
 * settings and its assignment references.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { AdvertisedProfile } from '../../../commands/advertised.js';
import { apiError } from '../../../errors/catalog.js';
import { activeSchedulesOf } from '../../../missions/scheduling/schedules.js';
import { listTemplates } from '../../../missions/catalog/templates.js';
import { robotsOf } from '../../../store/identity.js';
import { robotsNamed } from '../../../store/robot-names.js';
import type { RobotRecord } from '../../../store/records.js';
import { FreeForm, Nullable, Uuid } from '../../schemas/common.js';
import { named } from '../../schemas/named.js';
import { defineKind, type KindDeps } from '../kind.js';
import { liveStatus, robotCapabilities, RobotLiveStatus } from '../robot-live.js';
import { AGENT_LIST_LIMIT, CapabilityFilter, KindTag } from './common.js';
import { cachedRobot } from '../../../store/identity-reads.js';

export const RobotItem = named('RobotEntityItem', Type.Object(
  {
    kind: KindTag('robot'),
    robot_id: Uuid,
    name: Type.String(),
    capabilities: Type.Array(Type.String(), { description: 'Advertised action capabilities: set at registration plus those of its latest Hello.' }),
    status: RobotLiveStatus,
  },
  { additionalProperties: false },
));
type RobotItem = Static<typeof RobotItem>;

const ActionDescriptor = Type.Object(
  {
    name: Type.String(),
    arguments_schema: Nullable(FreeForm({ description: 'The JSON Schema (2020-12) of its arguments object as the robot advertised it.' })),
  },
  { additionalProperties: false, description: 'An action for control-robot `invoke_action`; arguments_schema null: it takes no arguments.' },
);

const SettingDescriptor = Type.Object(
  {
    key: Type.String(),
    kind: Type.Unsafe<'number' | 'boolean' | 'string' | 'unspecified'>({ type: 'string', enum: ['number', 'boolean', 'string', 'unspecified'] }),
    min: Nullable(Type.Number()),
    max: Nullable(Type.Number()),
    allowed_values: Type.Array(Type.String(), { description: 'Allowed string values; empty: any.' }),
  },
  { additionalProperties: false },
);

export const CapabilityDescriptors = named('RobotCapabilityDescriptors', Type.Object(
  {
    advertised_at_ms: Type.Integer({ description: 'When the gateway received the Hello that advertised them (Unix ms).' }),
    agent_version: Type.String(),
    has_policy: Type.Boolean({ description: 'false: the robot advertised no command policy and accepts only stop.' }),
    actions: Type.Array(ActionDescriptor),
    modes: Type.Array(Type.String(), { description: 'Modes control-robot `mode` accepts.' }),
    settings: Type.Array(SettingDescriptor, { description: 'Settings control-robot `update_settings` accepts.' }),
    go_to_area: Nullable(Type.Array(Type.Object({ latitude: Type.Number(), longitude: Type.Number() }, { additionalProperties: false }), { description: 'Ring of the go-to area; null: no go-to.' })),
    remote_config: Type.Boolean(),
    onboard_settings: Type.Boolean(),
  },
  { additionalProperties: false, description: 'From the robot\'s latest Hello since the gateway started; null on the robot when it has not connected since.' },
));
type CapabilityDescriptors = Static<typeof CapabilityDescriptors>;

const CurrentSetting = Type.Object(
  {
    key: Type.String(),
    value: Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
    command_id: Uuid,
    acknowledged_at_ms: Nullable(Type.Integer()),
  },
  { additionalProperties: false },
);

/** Commands of the robot scanned (newest first) for its acknowledged settings. */
export const SETTINGS_SCAN = 500;

export const RobotDetail = named('RobotEntity', Type.Object(
  {
    kind: KindTag('robot'),
    robot_id: Uuid,
    name: Type.String(),
    fleet_id: Uuid,
    active: Type.Boolean({ description: 'A member of the fleet\'s working set (inactive robots are registered only).' }),
    created_at_ms: Type.Integer(),
    capabilities: Type.Array(Type.String()),
    status: RobotLiveStatus,
    capability_descriptors: Nullable(CapabilityDescriptors),
    current_settings: Type.Array(CurrentSetting, {
      description:
        `Setting values the robot acknowledged through update_settings (newest value per key), from its latest ${SETTINGS_SCAN} commands in the audit log; ` +
        'values changed on the robot by other means are not known to the gateway.',
    }),
    assignments: Type.Object(
      {
        active_run: Nullable(Type.Object({ run_id: Uuid, mission_id: Uuid, schedule_id: Nullable(Uuid) }, { additionalProperties: false })),
        roster_mission_ids: Type.Array(Uuid, { description: 'Templates whose roster lists the robot (an empty roster admits every robot and is not listed).' }),
        schedule_ids: Type.Array(Uuid, { description: 'Schedules (not cancelled) that name the robot among their robot_ids.' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
));
type RobotDetail = Static<typeof RobotDetail>;

function descriptors(p: AdvertisedProfile | undefined): CapabilityDescriptors | null {
  if (!p) return null;
  const pol = p.policy;
  return {
    advertised_at_ms: p.advertisedAtMs,
    agent_version: p.agentVersion,
    has_policy: pol !== null,
    actions: (pol?.actions ?? []).map((a) => ({ name: a.name, arguments_schema: parseSchema(a.argumentsSchemaJson) })),
    modes: [...(pol?.modes ?? [])],
    settings: (pol?.settings ?? []).map((s) => ({ key: s.key, kind: s.kind, min: s.min, max: s.max, allowed_values: [...s.allowedValues] })),
    go_to_area: pol?.goToArea ? pol.goToArea.map((g) => ({ ...g })) : null,
    remote_config: pol?.remoteConfig ?? false,
    onboard_settings: pol?.onboardSettings ?? false,
  };
}

/** An advertised argument schema as an object; null when none was advertised or it is not a JSON object. */
export function parseSchema(json: string | null): Record<string, unknown> | null {
  if (json === null) return null;
  try {
    const v: unknown = JSON.parse(json);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null; // the command service refuses the action too (policy.ts): nothing to describe
  }
}

function currentSettings(deps: KindDeps, r: Readonly<RobotRecord>): RobotDetail['current_settings'] {
  const seen = new Map<string, RobotDetail['current_settings'][number]>();
  const ids = deps.commands.audit.commandIds({ fleetId: r.fleetId, robotId: r.robotId }, SETTINGS_SCAN);
  for (const id of ids) {
    const c = deps.commands.get(id);
    if (!c || c.action !== 'update_settings' || c.state !== 'agent_received') continue;
    const ackAt = c.history.find((h) => h.state === 'agent_received')?.atMs ?? null;
    const values = (c.args as { values: Record<string, string | number | boolean> }).values;
    for (const [key, value] of Object.entries(values)) {
      if (!seen.has(key)) seen.set(key, { key, value, command_id: c.commandId, acknowledged_at_ms: ackAt });
    }
  }
  return [...seen.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function detail(deps: KindDeps, fleetId: string, id: string): RobotDetail {
  const r = cachedRobot(deps.store, id);
  if (!r || r.fleetId !== fleetId) throw apiError('robot_not_found', { robotId: id });
  const run = deps.missions.tracker.activeRunOf(r.robotId);
  return {
    kind: 'robot',
    robot_id: r.robotId,
    name: r.name,
    fleet_id: r.fleetId,
    active: r.active,
    created_at_ms: r.createdAtMs,
    capabilities: [...robotCapabilities(deps, r)],
    status: liveStatus(deps, r),
    capability_descriptors: descriptors(deps.advertised.get(r.robotId)),
    current_settings: currentSettings(deps, r),
    assignments: {
      active_run: run ? { run_id: run.runId, mission_id: run.missionId, schedule_id: run.scheduleId } : null,
      roster_mission_ids: listTemplates(deps.store, fleetId).filter((t) => t.roster.includes(r.robotId)).map((t) => t.missionId),
      schedule_ids: activeSchedulesOf(deps.store, fleetId).filter((s) => s.robotIds.includes(r.robotId)).map((s) => s.scheduleId),
    },
  };
}

export const robotKind = defineKind<Readonly<RobotRecord>, RobotItem, RobotDetail>({
  name: 'robot',
  permission: 'robots:read',
  describe: 'robots active in the fleet, by robot_id, each with capabilities and live status; filters capability, available, online',
  filters: {
    capability: CapabilityFilter,
    available: Type.Boolean({ description: 'Only robots that are (true) or are not (false) available: online and not running a mission.' }),
    online: Type.Boolean({ description: 'Only robots that are (true) or are not (false) connected now.' }),
  },
  limit: AGENT_LIST_LIMIT,
  item: RobotItem,
  source(deps, fleet, f) {
    const { capability, available, online } = f as { capability?: string; available?: boolean; online?: boolean };
    return robotsOf(deps.store, fleet.fleetId, (r) => {
      if (!r.active) return false;
      if (online !== undefined && deps.link.isOnline(r.robotId) !== online) return false;
      if (available !== undefined && (deps.link.isOnline(r.robotId) && deps.missions.tracker.activeRunOf(r.robotId) === undefined) !== available) return false;
      return capability === undefined || robotCapabilities(deps, r).includes(capability);
    });
  },
  view: (deps, r) => ({ kind: 'robot', robot_id: r.robotId, name: r.name, capabilities: [...robotCapabilities(deps, r)], status: liveStatus(deps, r) }),
  detail: {
    schema: RobotDetail,
    get: (deps, fleet, id) => detail(deps, fleet.fleetId, id!),
  },
  // Through the name index: a resolve costs per name asked, not per robot of the fleet.
  *lookup(deps, fleet, names) {
    for (const name of names) {
      for (const r of robotsNamed(deps.store, fleet.fleetId, name)) if (r.active) yield { id: r.robotId, name: r.name };
    }
  },
});
