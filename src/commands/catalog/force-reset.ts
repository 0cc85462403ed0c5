/** `force_reset`: reset the robot's controller; one robot at a time, needs `operations:control`. */
import { declareCommand } from './declaration.js';
import { NoArgs, NoFields } from './schema-parts.js';

export const forceReset = declareCommand({
  action: 'force_reset',
  args: NoArgs(),
  wire: { case: 'forceReset', toWire: () => ({}) },
  policy: { kind: 'free' },
  fields: NoFields(),
  toArgs: () => ({}),
  controlRobot: { permission: 'operations:control', oneTarget: true },
  schedule: { oneTarget: true },
});
