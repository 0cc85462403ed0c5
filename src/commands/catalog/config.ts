/** `config`: read or write the robot's remote configuration (request/response; the robot must opt in). */
import { Type } from '@sinclair/typebox';
import { declareCommand } from './declaration.js';
import { JsonObjectSchema } from './schema-parts.js';

export const config = declareCommand({
  action: 'config',
  /** `values` null: a read. A write sends the keys to change. */
  args: Type.Object({ write: Type.Boolean(), values: Type.Union([JsonObjectSchema(), Type.Null()]) }),
  wire: { case: 'config', toWire: (a) => ({ write: a.write, valuesJson: a.values === null ? '' : JSON.stringify(a.values) }) },
  policy: { kind: 'bound', optIn: 'remoteConfig' },
  expectsResult: true,
  fields: Type.Object({ values: Type.Optional(JsonObjectSchema()) }),
  toArgs: (f) => ({ write: f.values !== undefined, values: f.values ?? null }),
  exchange: { segment: 'config', what: 'remote configuration', readOperationId: 'getRobotConfig', updateOperationId: 'updateRobotConfig' },
});
