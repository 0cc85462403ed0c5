/** `mode`: set the robot mode; it must be one of the robot's advertised allowed modes. */
import { Type } from '@sinclair/typebox';
import { declareCommand } from './declaration.js';

export const mode = declareCommand({
  action: 'mode',
  args: Type.Object({ mode: Type.String() }),
  wire: { case: 'setMode', toWire: (a) => ({ mode: a.mode }) },
  policy: {
    kind: 'bound',
    check: (p, a) => (p.modes.has(a.mode) ? null : `mode ${a.mode} is not among the allowed modes (${[...p.modes].join(', ') || 'none'})`),
  },
  fields: Type.Object({ mode: Type.String({ minLength: 1, maxLength: 64 }) }),
  toArgs: (f) => ({ mode: f.mode }),
  controlRobot: {},
  schedule: {},
  route: { segment: 'mode', operationId: 'robotSetMode', summary: "Set the robot mode; the mode must be one of the robot's advertised allowed modes." },
});
