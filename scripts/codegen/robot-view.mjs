// The telemetry part of the REST robot view (src/api/robot-view.ts), generated from the field table
// and the published schema (src/api/schemas/robots.ts `RobotView`): every property of the schema
// that a table row's `view` path names is filled from that row's `snapshot` path, in the schema's
// order, and the schema's telemetry objects (`motionTelemetry`, ...) are built from the rows whose
// view paths lie under them. The schema stays written by hand: it is the published contract
// (docs/api-conventions.md), and the generated code is typed against it.

const FROM_RECORD = ['id', 'fleetId'];

/** The object schema inside `Nullable(...)`, or null for another node. */
function nullableObject(node) {
  const inner = node.anyOf?.find((x) => x.type === 'object');
  return inner !== undefined && node.anyOf.some((x) => x.type === 'null') ? inner : null;
}

/**
 * The generated region of robot-view.ts for `fields` (the field table), `robotView` (the TypeBox
 * RobotView schema) and `nullableGroup` (the snapshot's object that is null when absent: `mission`).
 */
export function robotViewRegion(fields, robotView, nullableGroup) {
  const byView = new Map();
  for (const f of fields) for (const v of f.view) byView.set(v, f);
  // The robot's own id and fleet come from its record (the snapshot holds the same values).
  const used = new Set(FROM_RECORD);
  for (const v of FROM_RECORD) byView.delete(v);
  // A snapshot value read through `base` (`snap?.` at the top level, `snap.` inside the nested objects).
  const read = (f, base) => {
    const path = f.snapshot.split('.');
    const expr = path.map((k, i) => (i === 0 ? `${base}${k}` : `${path[i - 1] === nullableGroup && base.endsWith('?.') ? '?.' : '.'}${k}`)).join('');
    return f.rowType === 'Array(String)' ? `[...${expr}]` : expr;
  };
  const nested = (schema, prefix, indent) => {
    const lines = ['{'];
    for (const [key, node] of Object.entries(schema.properties)) {
      const at = `${prefix}${key}`;
      const f = byView.get(at);
      if (f !== undefined) {
        used.add(at);
        lines.push(`${indent}  ${key}: ${read(f, 'snap.')},`);
        continue;
      }
      const obj = node.type === 'object' ? node : nullableObject(node);
      if (obj === null) throw new Error(`robot view: ${at} is in the schema but no field table row shows it`);
      const inner = nested(obj, `${at}.`, `${indent}  `);
      const group = [...byView].find(([v]) => v.startsWith(`${at}.`))?.[1].snapshot.split('.')[0];
      if (obj === node) lines.push(`${indent}  ${key}: ${inner},`);
      else if (group === nullableGroup) lines.push(`${indent}  ${key}: snap.${nullableGroup} ? ${inner} : null,`);
      else throw new Error(`robot view: ${at} is nullable but not the ${nullableGroup} group`);
    }
    lines.push(`${indent}}`);
    return lines.join('\n');
  };
  const keys = [];
  const body = [];
  for (const [key, node] of Object.entries(robotView.properties)) {
    const f = byView.get(key);
    if (f !== undefined) {
      used.add(key);
      keys.push(key);
      body.push(`    ${key}: ${read(f, 'snap?.')} ?? null,`);
      continue;
    }
    const obj = nullableObject(node);
    if (obj !== null && [...byView.keys()].some((v) => v.startsWith(`${key}.`))) {
      keys.push(key);
      body.push(`    ${key}: snap ? ${nested(obj, `${key}.`, '    ')} : null,`);
    }
  }
  const missing = [...byView.keys()].filter((v) => !used.has(v));
  if (missing.length > 0) throw new Error(`robot view: the schema has no property for the view paths ${missing.join(', ')}`);
  return [
    '/** The view\'s telemetry properties, in the schema\'s order. */',
    `type TelemetryProperties = Pick<RobotView, ${keys.map((k) => `'${k}'`).join(' | ')}>;`,
    '',
    '/** The view\'s telemetry from the latest snapshot: every value null (and both objects null) before the first report. */',
    'function telemetryView(snap: TelemetrySnapshot | undefined): TelemetryProperties {',
    '  return {',
    ...body,
    '  };',
    '}',
  ].join('\n');
}
