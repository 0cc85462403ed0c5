/**
 * How a simulated robot applies gateway commands: one entry per `Command.action` case in
 * `SIM_COMMANDS`, which also gives the capabilities the robots advertise; mission commands are
 * applied by their own module (missions.ts).
 *
 * Request/response commands (config, onboard settings) are acked first (the handler returns) and
 * their result follows as a CommandResult on the next turn, as a field robot would do it.
 */
import type { RobotAgent } from '../agent/agent.js';
import type { CommandResult as HandlerResult } from '../agent/command-processor.js';
import type { Command } from '../gen/fleetgw/v1/robot_link_pb.js';
import { fromLatLon } from './geo.js';
import type { SimMissionRunner } from './missions.js';
import type { CommandedMode, RobotModel, SimSettings } from './robot-model.js';

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };
type JsonMap = { [k: string]: Json };

/** Robot-local state that the gateway can read and write remotely. */
export interface SimRobotState {
  /** Remote configuration (ConfigRequest). */
  config: JsonMap;
  /** Robot-local settings (OnboardSettingsRequest). */
  onboard: JsonMap;
}

/** What a command handler of the simulator works with. */
export interface SimCommandContext {
  readonly robotId: string;
  readonly model: RobotModel;
  readonly state: SimRobotState;
  /** Reports request/response outcomes and mission status. */
  readonly agent: Pick<RobotAgent, 'sendCommandResult' | 'sendMissionStatus'>;
  /** Mission execution (src/sim/missions.ts). */
  readonly missions: SimMissionRunner;
}

/** Initial robot-local state of a simulated robot. */
export function initialSimState(): SimRobotState {
  return {
    config: { telemetry_hz: 10, site_name: 'depot', geofence_margin_m: 2 },
    onboard: { speaker_volume: 5, language: 'en', night_mode: false },
  };
}

const ok: HandlerResult = { accept: true };
const no = (reason: string): HandlerResult => ({ accept: false, reason });

function parseObject(text: string): JsonMap | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonMap) : null;
  } catch {
    // Not JSON: the caller fails the command with `invalid_json`, which the gateway records.
    return null;
  }
}

/**
 * Reads (`valuesJson` empty / write false) or writes a key/value map. A write may only change
 * existing keys, each to a value of the same JSON type; anything else fails as `invalid_value` and
 * changes nothing.
 */
function readOrWrite(target: JsonMap, write: boolean, valuesJson: string): { success: boolean; error: string; payload: JsonMap } {
  if (!write) return { success: true, error: '', payload: { ...target } };
  const values = parseObject(valuesJson);
  if (!values) return { success: false, error: 'invalid_json', payload: { ...target } };
  for (const [k, v] of Object.entries(values)) {
    if (!(k in target) || typeof v !== typeof target[k] || v === null) return { success: false, error: 'invalid_value', payload: { ...target } };
  }
  Object.assign(target, values);
  return { success: true, error: '', payload: { ...target } };
}

/** Sends the CommandResult after the ack (the processor acks when this handler returns). */
function reportLater(ctx: SimCommandContext, commandId: string, r: { success: boolean; error: string; payload: JsonMap }): void {
  setImmediate(() => {
    ctx.agent.sendCommandResult({ commandId, success: r.success, error: r.error, payloadJson: JSON.stringify(r.payload) });
  });
}

function applySettings(model: RobotModel, valuesJson: string): HandlerResult {
  const values = parseObject(valuesJson);
  if (!values) return no('invalid_json');
  const next: SimSettings = { ...model.settings };
  for (const [k, v] of Object.entries(values)) {
    if (k === 'max_speed_mps' && typeof v === 'number') next.max_speed_mps = v;
    else if (k === 'lights_enabled' && typeof v === 'boolean') next.lights_enabled = v;
    else if (k === 'obstacle_sensitivity' && typeof v === 'string') next.obstacle_sensitivity = v;
    else return no('invalid_value');
  }
  model.settings = next;
  return ok;
}

type Action = Command['action'];
type ActionCase = Exclude<Action['case'], undefined>;

/** How the simulated robots handle one `Command.action` case. */
interface SimCommand<C extends ActionCase> {
  /** The name advertised in Hello's capabilities (the gateway's action name), or null when not advertised there. */
  readonly capability: string | null;
  readonly apply: (ctx: SimCommandContext, value: Extract<Action, { case: C }>['value'], commandId: string) => HandlerResult;
}

/**
 * Every `Command.action` case and how a simulated robot applies it: the one place a new command is
 * added on the robot side (typed over the proto's cases, so a case without a handler fails the
 * typecheck). The advertised capabilities are derived from it ({@link SIM_CAPABILITIES}).
 */
const SIM_COMMANDS: { readonly [C in ActionCase]: SimCommand<C> } = {
  stop: { capability: 'stop', apply: ({ model }, v) => (model.stop(v.reason), ok) },
  start: { capability: 'start', apply: ({ model }) => (model.start(), ok) },
  release: { capability: 'release', apply: ({ model }) => (model.release(), ok) },
  forceReset: { capability: 'force_reset', apply: ({ model }) => (model.forceReset(), ok) },
  setMode: {
    capability: 'mode',
    apply: ({ model }, v) => {
      if (v.mode !== 'autonomous' && v.mode !== 'manual' && v.mode !== 'docking') return no('unknown_mode');
      model.setMode(v.mode satisfies CommandedMode);
      return ok;
    },
  },
  invokeAction: {
    capability: 'invoke_action',
    apply: ({ model }, v) => {
      const args = v.argumentsJson === '' ? {} : parseObject(v.argumentsJson);
      if (!args) return no('invalid_json');
      model.invoke(v.name, args);
      return ok;
    },
  },
  updateSettings: { capability: 'update_settings', apply: ({ model }, v) => applySettings(model, v.valuesJson) },
  goTo: {
    capability: 'go_to',
    apply: ({ model }, v) => {
      const p = fromLatLon(v.latitude, v.longitude);
      model.goTo({
        x: p.xM,
        y: p.yM,
        headingDeg: v.hasHeading ? v.headingDeg : null,
        maxSpeedMps: v.maxSpeedMps > 0 ? v.maxSpeedMps : null,
      });
      return ok;
    },
  },
  config: {
    capability: 'config',
    apply: (ctx, v, commandId) => (reportLater(ctx, commandId, readOrWrite(ctx.state.config, v.write, v.valuesJson)), ok),
  },
  onboardSettings: {
    capability: 'onboard_settings',
    apply: (ctx, v, commandId) => (reportLater(ctx, commandId, readOrWrite(ctx.state.onboard, v.write, v.valuesJson)), ok),
  },
  missionStart: { capability: null, apply: (ctx, v) => ctx.missions.start(v) },
  missionControl: { capability: null, apply: (ctx, v) => ctx.missions.control(v) },
};

/** Actions the simulated robots advertise in their Hello (those of {@link SIM_COMMANDS} with a capability). */
export const SIM_CAPABILITIES: readonly string[] = Object.values(SIM_COMMANDS).flatMap((c) => (c.capability === null ? [] : [c.capability]));

/** Applies one command to a simulated robot (called at most once per command id by the agent). */
export function applyCommand(ctx: SimCommandContext, cmd: Command): HandlerResult {
  const a = cmd.action;
  if (a.case === undefined || !Object.hasOwn(SIM_COMMANDS, a.case)) return no('unsupported_action');
  // The map is typed per case; TypeScript cannot correlate `a.case` with `a.value` through the index.
  const apply = SIM_COMMANDS[a.case].apply as (c: SimCommandContext, v: unknown, id: string) => HandlerResult;
  return apply(ctx, a.value, cmd.commandId);
}
