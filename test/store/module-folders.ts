/**
 * Where each plugin's module lives (the files that may touch its databases directly), for the read
 * and write ownership tests. The registry's files differ between them (its read helpers do not
 * write), so each test adds its own `registry` entry.
 */
export const MODULE_FOLDERS: Record<string, RegExp> = {
  auth: /^src\/auth\//,
  events: /^src\/events\//,
  idempotency: /^src\/idempotency\//,
  commands: /^src\/commands\//,
  telemetry: /^src\/telemetry\//,
  usage: /^src\/fleet\/robots\/details\//,
  'floor-plans': /^src\/fleet\/floor-plans\//,
  webhooks: /^src\/webhooks\//,
  alerts: /^src\/fleet\/safety\/alerts\//,
  faults: /^src\/fleet\/(safety\/faults|robots\/health)\//,
  'field-rules': /^src\/fleet\/safety\/field-rules\//,
  objects: /^src\/fleet\/site\/objects\//,
  catalog: /^src\/missions\/catalog\//,
  missions: /^src\/missions\/(scheduling\/|runs\/|retention\.ts$)/,
};
