/** `stop`: bring the robot to a controlled halt and hold. Urgent, kept for an offline robot. */
import { Type } from '@sinclair/typebox';
import { declareCommand } from './declaration.js';

export const stop = declareCommand({
  action: 'stop',
  args: Type.Object({ reason: Type.String() }),
  wire: { case: 'stop', toWire: (a) => ({ reason: a.reason }) },
  urgent: true,
  bringsToRest: true,
  policy: { kind: 'free' },
  fields: Type.Object({ reason: Type.Optional(Type.String({ maxLength: 256 })) }),
  toArgs: (f, origin) => ({ reason: f.reason ?? origin.defaultReason }),
  controlRobot: { fleetWide: 'stop_all' },
  schedule: {},
});
