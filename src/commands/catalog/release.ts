/** `release`: hand the robot back after an operator hold (needs `operations:control` on control-robot). */
import { declareCommand } from './declaration.js';
import { NoArgs, NoFields } from './schema-parts.js';

export const release = declareCommand({
  action: 'release',
  args: NoArgs(),
  wire: { case: 'release', toWire: () => ({}) },
  policy: { kind: 'free' },
  fields: NoFields(),
  toArgs: () => ({}),
  controlRobot: { permission: 'operations:control' },
  schedule: {},
});
