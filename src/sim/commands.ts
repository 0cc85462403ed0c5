/**
 * How a simulated robot applies gateway commands. One `case` per `Command.action`; mission cases
 * live in their own module and join the switch with one line each.
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

/** Applies one command to a simulated robot (called at most once per command id by the agent). */
export function applyCommand(ctx: SimCommandContext, cmd: Command): HandlerResult {
  const { model } = ctx;
  const a = cmd.action;
  switch (a.case) {
    case 'stop':
      model.stop(a.value.reason);
      return ok;
    case 'start':
      model.start();
      return ok;
    case 'release':
      model.release();
      return ok;
    case 'forceReset':
      model.forceReset();
      return ok;
    case 'setMode':
      if (a.value.mode !== 'autonomous' && a.value.mode !== 'manual' && a.value.mode !== 'docking') return no('unknown_mode');
      model.setMode(a.value.mode satisfies CommandedMode);
      return ok;
    case 'invokeAction': {
      const args = a.value.argumentsJson === '' ? {} : parseObject(a.value.argumentsJson);
      if (!args) return no('invalid_json');
      model.invoke(a.value.name, args);
      return ok;
    }
    case 'updateSettings':
      return applySettings(model, a.value.valuesJson);
    case 'goTo': {
      const p = fromLatLon(a.value.latitude, a.value.longitude);
      model.goTo({
        x: p.xM,
        y: p.yM,
        headingDeg: a.value.hasHeading ? a.value.headingDeg : null,
        maxSpeedMps: a.value.maxSpeedMps > 0 ? a.value.maxSpeedMps : null,
      });
      return ok;
    }
    case 'config':
      reportLater(ctx, cmd.commandId, readOrWrite(ctx.state.config, a.value.write, a.value.valuesJson));
      return ok;
    case 'onboardSettings':
      reportLater(ctx, cmd.commandId, readOrWrite(ctx.state.onboard, a.value.write, a.value.valuesJson));
      return ok;
    case 'missionStart':
      return ctx.missions.start(a.value);
    case 'missionControl':
      return ctx.missions.control(a.value);
    default:
      return no('unsupported_action');
  }
}
