// The field-specific part of the agent's TelemetrySample encoder (src/agent/sample-encoder.ts),
// generated from the field table: the `SampleInput` shape (each row's `agent` key) and the
// straight-line writes of each proto field in the order protobuf-es writes them. The robot side
// shares only the proto with the gateway at run time, so the table reaches it as generated code.

const TS_TYPE = { double: 'number', float: 'number', int32: 'number', int64: 'number', bool: 'boolean', string: 'string', 'repeated string': 'readonly string[]' };
const WIRE_TYPE = { double: 1, float: 5, int32: 0, int64: 0, enum: 0, bool: 0, string: 2, 'repeated string': 2 };
const WRITER = { double: 'double', float: 'float', int32: 'int32', enum: 'int32', int64: 'int64', bool: 'bool', string: 'string' };
// What an absent flat field encodes as: protobuf's zero value, which the writers leave off the wire.
// The types require every key, but a robot's JavaScript written before a field existed leaves it out:
// it still sends, with that field absent, rather than throwing in the encoder.
const ZERO = { double: '0', float: '0', int32: '0', int64: '0', enum: '0', bool: 'false', string: "''", 'repeated string': '[]' };
const hex = (n) => `0x${n.toString(16).padStart(2, '0')}`;

/**
 * The generated region of sample-encoder.ts for `fields` (the field table) and `sampleSchema`
 * (protobuf-es TelemetrySampleSchema: field order, sub-messages and enum type names).
 */
export function sampleEncoderRegion(fields, sampleSchema) {
  const proto = fields.filter((f) => f.proto !== null);
  const byNumbers = new Map(proto.map((f) => [f.proto.join('.'), f]));
  // Agent keys: `key` (flat) or `object.key` (an object of SampleInput, null when absent).
  const objects = new Map();
  const flat = [];
  for (const f of proto) {
    if (f.agent === null) throw new Error(`sample encoder: ${f.column} has no agent key`);
    const parts = f.agent.split('.');
    if (parts.length > 2) throw new Error(`sample encoder: ${f.column}: agent key ${f.agent} nested more than once`);
    if (parts.length === 2) {
      if (!objects.has(parts[0])) objects.set(parts[0], []);
      objects.get(parts[0]).push(f);
    } else flat.push(f);
  }
  const tsType = (f, field) => (f.protoType === 'enum' ? field.enum.name : TS_TYPE[f.protoType]);
  const fieldAt = (numbers) => {
    let msg = sampleSchema;
    let field;
    for (const n of numbers) {
      if (msg === undefined) throw new Error(`sample encoder: field ${numbers.join('.')} is inside a scalar`);
      field = msg.fields.find((x) => x.number === n);
      if (field === undefined) throw new Error(`sample encoder: TelemetrySample has no field ${numbers.join('.')}`);
      msg = field.message;
    }
    return field;
  };

  const out = ['/** One telemetry sample as plain values (the fields of proto/fleetgw/v1/telemetry.proto\'s TelemetrySample). */', 'export interface SampleInput {'];
  const emitted = new Set();
  for (const f of proto) {
    const parts = f.agent.split('.');
    if (parts.length === 1) {
      out.push(`  ${f.agent}: ${tsType(f, fieldAt(f.proto))};`);
      continue;
    }
    if (emitted.has(parts[0])) continue;
    emitted.add(parts[0]);
    out.push(`  /** null: absent from the sample (the ${parts[0]} message is left out). */`, `  ${parts[0]}: {`);
    for (const g of objects.get(parts[0])) out.push(`    ${g.agent.split('.')[1]}: ${tsType(g, fieldAt(g.proto))};`);
    out.push('  } | null;');
  }
  out.push('}', '');

  const access = (f) => {
    const parts = f.agent.split('.');
    return parts.length === 2 ? `s.${parts[0]}.${parts[1]}` : `(s.${f.agent} ?? ${ZERO[f.protoType]})`;
  };
  const write = (f, field, indent, lines) => {
    const tag = hex((field.number << 3) | WIRE_TYPE[f.protoType]);
    if (f.protoType === 'repeated string') {
      lines.push(`${indent}for (const x of ${access(f)}) {`, `${indent}  putTag(${tag});`, `${indent}  writeString(x);`, `${indent}}`);
    } else {
      lines.push(`${indent}${WRITER[f.protoType]}(${tag}, ${access(f)});`);
    }
  };
  const body = ['  let mark = 0;'];
  for (const field of sampleSchema.fields) {
    if (field.message === undefined) {
      const f = byNumbers.get(String(field.number));
      if (f !== undefined) write(f, field, '  ', body);
      continue;
    }
    const inner = field.message.fields.map((x) => [x, byNumbers.get(`${field.number}.${x.number}`)]).filter(([, f]) => f !== undefined);
    if (inner.length === 0) continue;
    const objs = new Set(inner.map(([, f]) => (f.agent.includes('.') ? f.agent.split('.')[0] : '')));
    if (objs.size > 1) throw new Error(`sample encoder: the fields of ${field.name} mix agent objects (${[...objs].join(', ')})`);
    const obj = [...objs][0];
    const indent = obj === '' ? '  ' : '    ';
    if (obj !== '') body.push(`  if (s.${obj} != null) {`);
    body.push(`${indent}mark = openMessage(${hex((field.number << 3) | 2)});`);
    for (const [x, f] of inner) write(f, x, indent, body);
    body.push(`${indent}closeMessage(mark);`);
    if (obj !== '') body.push('  }');
  }
  // Text bounds the scratch buffer: 3 bytes per UTF-16 unit, plus 8 per list item for its tag and length.
  const text = [];
  const items = [];
  for (const f of proto) {
    if (f.protoType === 'string') text.push(f);
    if (f.protoType === 'repeated string') items.push(f);
  }
  const fixed = Math.max(512, 16 * proto.length + 64);
  const sizing = ['  let text = 0;', '  let items = 0;'];
  for (const f of text) {
    const parts = f.agent.split('.');
    sizing.push(parts.length === 2 ? `  if (s.${parts[0]} != null) text += ${access(f)}.length;` : `  text += ${access(f)}.length;`);
  }
  for (const f of items) {
    const parts = f.agent.split('.');
    const lines = [`items += ${access(f)}.length;`, `for (const x of ${access(f)}) text += x.length;`];
    // A list inside an object of SampleInput counts only when the object is there.
    if (parts.length === 2) sizing.push(`  if (s.${parts[0]} != null) {`, ...lines.map((l) => `    ${l}`), '  }');
    else sizing.push(...lines.map((l) => `  ${l}`));
  }
  out.push(
    '/** Writes the sample\'s fields into the scratch buffer from position 0. */',
    'function writeFields(s: SampleInput): void {',
    ...body,
    '}',
    '',
    '/** An upper bound of the sample\'s encoded size: fixed-size fields, then text and list items. */',
    'function sizeBound(s: SampleInput): number {',
    ...sizing,
    `  return ${fixed} + 3 * text + 8 * items;`,
    '}',
  );
  return out.join('\n');
}
