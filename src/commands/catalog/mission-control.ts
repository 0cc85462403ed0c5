/** `mission_control`: pause, resume, cancel or abort a mission run. Pause is urgent; all but resume bring the robot to rest. */
import { Type, type Static } from '@sinclair/typebox';
import { MissionControl_Action } from '../../gen/fleetgw/v1/robot_link_pb.js';
import { declareCommand } from './declaration.js';
import { NoFields } from './schema-parts.js';

const Verb = Type.Union([Type.Literal('pause'), Type.Literal('resume'), Type.Literal('cancel'), Type.Literal('abort')]);
/** Mission run control verbs (`mission_control` args). */
export type MissionControlVerb = Static<typeof Verb>;

const WIRE_VERBS: Record<MissionControlVerb, MissionControl_Action> = {
  pause: MissionControl_Action.PAUSE,
  resume: MissionControl_Action.RESUME,
  cancel: MissionControl_Action.CANCEL,
  abort: MissionControl_Action.ABORT,
};

export const missionControl = declareCommand({
  action: 'mission_control',
  args: Type.Object({ runId: Type.String(), action: Verb }),
  wire: { case: 'missionControl', toWire: (a) => ({ runId: a.runId, action: WIRE_VERBS[a.action] }) },
  urgent: (a) => a.action === 'pause',
  bringsToRest: (a) => a.action !== 'resume',
  policy: { kind: 'free' },
  fields: NoFields(),
  toArgs: () => {
    throw new Error('mission_control is built by mission runs, not from a request');
  },
});
