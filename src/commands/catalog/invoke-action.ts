/** `invoke_action`: run an advertised action; arguments are checked against its advertised JSON Schema. */
import { Type } from '@sinclair/typebox';
import { validateArguments } from '../policy.js';
import { declareCommand } from './declaration.js';
import { JsonObjectSchema } from './schema-parts.js';

export const invokeAction = declareCommand({
  action: 'invoke_action',
  args: Type.Object({ name: Type.String(), arguments: JsonObjectSchema() }),
  wire: { case: 'invokeAction', toWire: (a) => ({ name: a.name, argumentsJson: JSON.stringify(a.arguments) }) },
  policy: {
    kind: 'bound',
    check: (p, a) => {
      const rule = p.actions.get(a.name);
      if (!rule) return `action ${a.name} is not advertised`;
      return validateArguments(a.name, rule, a.arguments);
    },
  },
  fields: Type.Object({ actionName: Type.String({ minLength: 1, maxLength: 128 }), arguments: Type.Optional(JsonObjectSchema()) }),
  toArgs: (f) => ({ name: f.actionName, arguments: f.arguments ?? {} }),
  controlRobot: {},
  schedule: {},
  route: {
    segment: 'invoke-service',
    operationId: 'robotInvokeService',
    summary: "Invoke an advertised action; `arguments` are validated against the action's advertised JSON Schema.",
    largeBody: true,
  },
});
