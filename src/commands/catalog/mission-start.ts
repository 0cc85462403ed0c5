/** `mission_start`: run a mission on the robot (sent by mission runs; templates carry their own capability checks). */
import { Type } from '@sinclair/typebox';
import { declareCommand } from './declaration.js';
import { JsonObjectSchema, NoFields } from './schema-parts.js';

export const missionStart = declareCommand({
  action: 'mission_start',
  args: Type.Object({
    runId: Type.String(),
    missionId: Type.String(),
    name: Type.String(),
    steps: Type.Array(Type.Object({ kind: Type.String(), config: JsonObjectSchema() })),
    parameters: JsonObjectSchema(),
    featureId: Type.Union([Type.String(), Type.Null()]),
  }),
  wire: {
    case: 'missionStart',
    toWire: (a) => ({
      runId: a.runId,
      missionId: a.missionId,
      name: a.name,
      steps: a.steps.map((s) => ({ kind: s.kind, configJson: JSON.stringify(s.config) })),
      parametersJson: JSON.stringify(a.parameters),
      featureId: a.featureId ?? '',
    }),
  },
  policy: { kind: 'free' },
  fields: NoFields(),
  toArgs: () => {
    throw new Error('mission_start is built by mission runs, not from a request');
  },
});
