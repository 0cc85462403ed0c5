/** `start`: the robot resumes work. */
import { declareCommand } from './declaration.js';
import { NoArgs, NoFields } from './schema-parts.js';

export const start = declareCommand({
  action: 'start',
  args: NoArgs(),
  wire: { case: 'start', toWire: () => ({}) },
  policy: { kind: 'free' },
  fields: NoFields(),
  toArgs: () => ({}),
  controlRobot: {},
  schedule: {},
});
