/** `onboard_settings`: read or write robot-local settings (request/response; the robot must opt in). */
import { Type } from '@sinclair/typebox';
import { declareCommand } from './declaration.js';
import { JsonObjectSchema } from './schema-parts.js';

export const onboardSettings = declareCommand({
  action: 'onboard_settings',
  /** `values` null: a read. A write sends the keys to change. */
  args: Type.Object({ write: Type.Boolean(), values: Type.Union([JsonObjectSchema(), Type.Null()]) }),
  wire: { case: 'onboardSettings', toWire: (a) => ({ write: a.write, valuesJson: a.values === null ? '' : JSON.stringify(a.values) }) },
  policy: { kind: 'bound', optIn: 'onboardSettings' },
  expectsResult: true,
  fields: Type.Object({ values: Type.Optional(JsonObjectSchema()) }),
  toArgs: (f) => ({ write: f.values !== undefined, values: f.values ?? null }),
  exchange: {
    segment: 'onboard-settings',
    what: 'onboard settings',
    readOperationId: 'getRobotOnboardSettings',
    updateOperationId: 'updateRobotOnboardSettings',
  },
});
