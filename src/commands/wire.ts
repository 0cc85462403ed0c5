/** Builds the protobuf `Command` a record is sent as. */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { CommandSchema, MissionControl_Action, type Command } from '../gen/fleetgw/v1/robot_link_pb.js';
import type { CommandRecord, JsonObject, MissionControlVerb } from './types.js';

type WireAction = NonNullable<MessageInitShape<typeof CommandSchema>['action']>;

const MISSION_VERBS: Record<MissionControlVerb, MissionControl_Action> = {
  pause: MissionControl_Action.PAUSE,
  resume: MissionControl_Action.RESUME,
  cancel: MissionControl_Action.CANCEL,
  abort: MissionControl_Action.ABORT,
};

const json = (v: JsonObject | null): string => (v === null ? '' : JSON.stringify(v));

/** The `Command.action` oneof for a record (the record's action and args were validated on submit). */
function wireAction(rec: CommandRecord): WireAction {
  // Each case narrows args by the action it was stored with (see CommandArgsByAction).
  const a = rec.args as never;
  switch (rec.action) {
    case 'stop':
      return { case: 'stop', value: { reason: (a as { reason: string }).reason } };
    case 'start':
      return { case: 'start', value: {} };
    case 'release':
      return { case: 'release', value: {} };
    case 'force_reset':
      return { case: 'forceReset', value: {} };
    case 'mode':
      return { case: 'setMode', value: { mode: (a as { mode: string }).mode } };
    case 'invoke_action': {
      const v = a as { name: string; arguments: JsonObject };
      return { case: 'invokeAction', value: { name: v.name, argumentsJson: JSON.stringify(v.arguments) } };
    }
    case 'update_settings':
      return { case: 'updateSettings', value: { valuesJson: JSON.stringify((a as { values: JsonObject }).values) } };
    case 'go_to': {
      const v = a as { latitude: number; longitude: number; headingDeg: number | null; maxSpeedMps: number | null };
      return {
        case: 'goTo',
        value: {
          latitude: v.latitude,
          longitude: v.longitude,
          hasHeading: v.headingDeg !== null,
          headingDeg: v.headingDeg ?? 0,
          maxSpeedMps: v.maxSpeedMps ?? 0,
        },
      };
    }
    case 'config': {
      const v = a as { write: boolean; values: JsonObject | null };
      return { case: 'config', value: { write: v.write, valuesJson: json(v.values) } };
    }
    case 'onboard_settings': {
      const v = a as { write: boolean; values: JsonObject | null };
      return { case: 'onboardSettings', value: { write: v.write, valuesJson: json(v.values) } };
    }
    case 'mission_start': {
      const v = a as {
        runId: string; missionId: string; name: string; steps: { kind: string; config: JsonObject }[];
        parameters: JsonObject; featureId: string | null;
      };
      return {
        case: 'missionStart',
        value: {
          runId: v.runId,
          missionId: v.missionId,
          name: v.name,
          steps: v.steps.map((s) => ({ kind: s.kind, configJson: JSON.stringify(s.config) })),
          parametersJson: JSON.stringify(v.parameters),
          featureId: v.featureId ?? '',
        },
      };
    }
    case 'mission_control': {
      const v = a as { runId: string; action: MissionControlVerb };
      return { case: 'missionControl', value: { runId: v.runId, action: MISSION_VERBS[v.action] } };
    }
  }
}

/**
 * The wire message for a record. Resends reuse the same commandId and seq, which is what lets the
 * agent drop a duplicate instead of applying it twice.
 */
export function toWire(rec: CommandRecord): Command {
  return create(CommandSchema, {
    commandId: rec.commandId,
    issuedAtMs: BigInt(rec.createdAtMs),
    seq: BigInt(rec.seq),
    action: wireAction(rec),
  });
}
