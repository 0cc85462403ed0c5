/** `update_settings`: change advertised settings, each value inside its advertised range or allowed values. */
import { Type } from '@sinclair/typebox';
import { settingProblem } from '../policy-rules.js';
import { declareCommand } from './declaration.js';
import { SettingValuesSchema } from './schema-parts.js';

export const updateSettings = declareCommand({
  action: 'update_settings',
  args: Type.Object({ values: SettingValuesSchema() }),
  wire: { case: 'updateSettings', toWire: (a) => ({ valuesJson: JSON.stringify(a.values) }) },
  policy: {
    kind: 'bound',
    check: (p, a) => {
      for (const [k, v] of Object.entries(a.values)) {
        const problem = settingProblem(k, v, p.settings.get(k));
        if (problem) return problem;
      }
      return null;
    },
  },
  fields: Type.Object({ settings: SettingValuesSchema() }),
  toArgs: (f) => ({ values: f.settings }),
  controlRobot: {},
  schedule: {},
  route: {
    segment: 'settings',
    operationId: 'robotUpdateSettings',
    summary: 'Send setting updates; each key must be an advertised setting and each value inside its range or allowed values.',
    largeBody: true,
  },
});
