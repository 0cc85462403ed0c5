// The field-specific part of the hand-rolled JavaScript TelemetryBatch reader
// (src/telemetry/decode/fast-reader.ts), generated from the field table: the sample's state, the
// proto reads, the string bounds, the RowBinary row and the live JSON message, as the straight-line
// code a person would write (no walk over the table per sample). The reader's primitives (varints,
// UTF-8 checks, skipping) stay hand-written in that file; this fills its generated region.

const ROW_OF_PROTO = { double: 'Float64', float: 'Float32', bool: 'UInt8', int32: 'Int32', enum: 'Enum8', string: 'String', 'repeated string': 'Array(String)', int64: 'Int64' };
/** Columns from the batch's context, and what the row writer has for them. */
const CONTEXT = { robot_id: 'w.raw(robot);', fleet_id: 'w.raw(fleet);', received_at_ms: 'w.i64(receivedAtMs);' };

const camel = (column) => column.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const pascal = (name) => name[0].toUpperCase() + name.slice(1);
const upper = (column) => column.toUpperCase();
const q = (s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Names of a column's state in the generated code. */
function names(f) {
  const c = camel(f.column);
  return { v: c, s: `${c}S`, e: `${c}E`, lo: `${c}Lo`, hi: `${c}Hi`, count: `${c}Count`, d: `D_${upper(f.column)}`, fl: `F_${upper(f.column)}` };
}

/**
 * The generated region of fast-reader.ts for `fields` (the field table), `sampleSchema` (protobuf-es
 * TelemetrySampleSchema: names the read function of each sub-message) and `live` (`liveTree`,
 * `NULLABLE_OBJECT`, `NULL_WHEN_EMPTY` of live-json.ts: the message's layout).
 */
export function fastReaderRegion(fields, sampleSchema, live) {
  const proto = fields.filter((f) => f.proto !== null);
  for (const f of fields) {
    if (f.proto === null) {
      if (!(f.column in CONTEXT)) throw new Error(`fast reader: no context value for column ${f.column}`);
      continue;
    }
    if (ROW_OF_PROTO[f.protoType] !== f.rowType) throw new Error(`fast reader: ${f.column}: proto ${f.protoType} is not written as ${f.rowType}`);
    if (f.proto.length > 2) throw new Error(`fast reader: ${f.column}: fields nested deeper than one message are not supported`);
  }
  const doubles = proto.filter((f) => f.protoType === 'double');
  const floats = proto.filter((f) => f.protoType === 'float');
  const out = [];

  // State.
  out.push('// One sample\'s values (reset per sample; strings are [start, end) views of the frame).');
  out.push(`const d = new Float64Array(${doubles.length});`);
  out.push(`const fl = new Float32Array(${floats.length}); // Float32: exactly what the wire held`);
  out.push(`const ${doubles.map((f, i) => `${names(f).d} = ${i}`).join(', ')};`);
  out.push(`const ${floats.map((f, i) => `${names(f).fl} = ${i}`).join(', ')};`);
  const reset = ['d.fill(0);', 'fl.fill(0);'];
  for (const f of proto) {
    const n = names(f);
    switch (f.protoType) {
      case 'int64': out.push(`let ${n.lo} = 0;`, `let ${n.hi} = 0;`); reset.push(`${n.lo} = 0;`, `${n.hi} = 0;`); break;
      case 'bool': case 'int32': case 'enum': out.push(`let ${n.v} = 0;`); reset.push(`${n.v} = 0;`); break;
      case 'string': out.push(`let ${n.s} = 0;`, `let ${n.e} = 0;`); reset.push(`${n.s} = 0;`, `${n.e} = 0;`); break;
      case 'repeated string': out.push(`let ${n.v} = new Int32Array(64); // start, end pairs`, `let ${n.count} = 0;`); reset.push(`${n.count} = 0;`); break;
      default: break;
    }
  }
  for (const f of fields.filter((x) => x.bound !== null)) {
    const n = upper(f.column);
    out.push(`const BOUND_${n} = BOUND_REASONS.indexOf('${f.column}_too_long');`, `const MAX_${n} = BOUND_LIMITS[BOUND_${n}]!;`);
    if (f.bound.maxItems !== undefined) out.push(`const BOUND_${n}_ITEMS = BOUND_REASONS.indexOf('${f.column}_too_many');`, `const MAX_${n}_ITEMS = BOUND_LIMITS[BOUND_${n}_ITEMS]!;`);
  }
  out.push('const ENUM_MAX = HEALTH_LEVEL_NAMES.length - 1;');
  out.push('const ENUM_JSON = HEALTH_LEVEL_NAMES.map((n) => `"${n}"`);');
  out.push('', 'function resetSample(): void {', ...reset.map((l) => `  ${l}`), '}');

  // Reads.
  const read = (f, indent) => {
    const n = names(f);
    switch (f.protoType) {
      case 'double': return [`d[${n.d}] = double(); break;`];
      case 'float': return [`fl[${n.fl}] = float(); break;`];
      case 'bool': return [`${n.v} = bool(); break;`];
      case 'int32': case 'enum': return [`${n.v} = int32(); break;`];
      case 'string': return [`${n.s} = string(); ${n.e} = pos; break;`];
      case 'int64': return ['{', `${indent}  varint64();`, `${indent}  ${n.lo} = vLo >>> 0;`, `${indent}  ${n.hi} = vHi | 0;`, `${indent}  break;`, `${indent}}`];
      case 'repeated string': return [
        '{',
        `${indent}  const s = string();`,
        `${indent}  if (${n.count} * 2 + 2 > ${n.v}.length) {`,
        `${indent}    const grown = new Int32Array(${n.v}.length * 2);`,
        `${indent}    grown.set(${n.v});`,
        `${indent}    ${n.v} = grown;`,
        `${indent}  }`,
        `${indent}  ${n.v}[${n.count} * 2] = s;`,
        `${indent}  ${n.v}[${n.count} * 2 + 1] = pos;`,
        `${indent}  ${n.count}++;`,
        `${indent}  break;`,
        `${indent}}`,
      ];
      default: throw new Error(`fast reader: ${f.column}: proto type ${f.protoType}`);
    }
  };
  const caseLines = (number, body, indent) => {
    const [first, ...rest] = body;
    return [`${indent}case ${number}: ${first}`, ...rest];
  };
  const outer = new Map();
  for (const f of proto) {
    const k = f.proto[0];
    if (!outer.has(k)) outer.set(k, []);
    outer.get(k).push(f);
  }
  const readName = (k) => {
    const field = sampleSchema.fields.find((x) => x.number === k);
    if (field === undefined) throw new Error(`fast reader: TelemetrySample has no field ${k}`);
    return `read${pascal(field.localName)}`;
  };
  for (const [k, group] of [...outer].sort((a, b) => a[0] - b[0])) {
    if (group[0].proto.length === 1) continue;
    out.push('', `function ${readName(k)}(msgEnd: number): void {`, '  while (pos < msgEnd) {', '    const t = tag();', '    switch (t >>> 3) {');
    for (const f of [...group].sort((a, b) => a.proto[1] - b.proto[1])) out.push(...caseLines(f.proto[1], read(f, '      '), '      '));
    out.push('      default: skip(t & 7, t >>> 3, SUB_SKIP_BUDGET);', '    }', '  }', '}');
  }
  out.push('', 'function readSample(msgEnd: number): void {', '  resetSample();', '  while (pos < msgEnd) {', '    const t = tag();', '    switch (t >>> 3) {');
  for (const [k, group] of [...outer].sort((a, b) => a[0] - b[0])) {
    if (group[0].proto.length === 1) out.push(...caseLines(k, read(group[0], '      '), '      '));
    else out.push(`      case ${k}: ${readName(k)}(subEnd()); break;`);
  }
  out.push('      default: skip(t & 7, t >>> 3, SAMPLE_SKIP_BUDGET);', '    }', '  }', '}');

  // Bounds.
  out.push('', '/** Applies the string bounds to the sample just read (its final values, as the reference path does). */', 'function boundSample(): void {', '  let c = 0;');
  for (const f of fields.filter((x) => x.bound !== null)) {
    const n = names(f);
    const u = upper(f.column);
    if (f.protoType === 'string') {
      out.push(`  c = utf8CutEnd(u8, ${n.s}, ${n.e}, MAX_${u});`, `  if (c !== ${n.e}) {`, `    ${n.e} = c;`, `    bounds[BOUND_${u}]!++;`, '  }');
    } else {
      if (f.bound.maxItems !== undefined) {
        out.push(`  if (${n.count} > MAX_${u}_ITEMS) {`, `    bounds[BOUND_${u}_ITEMS]! += ${n.count} - MAX_${u}_ITEMS;`, `    ${n.count} = MAX_${u}_ITEMS;`, '  }');
      }
      out.push(
        `  for (let i = 0; i < ${n.count}; i++) {`,
        `    const e = ${n.v}[i * 2 + 1]!;`,
        `    c = utf8CutEnd(u8, ${n.v}[i * 2]!, e, MAX_${u});`,
        '    if (c !== e) {',
        `      ${n.v}[i * 2 + 1] = c;`,
        `      bounds[BOUND_${u}]!++;`,
        '    }',
        '  }',
      );
    }
  }
  out.push('}');

  // The row.
  out.push('', '/** The sample\'s RowBinary row, columns in table order. */', 'function writeRow(w: ByteWriter, robot: Uint8Array, fleet: Uint8Array, receivedAtMs: number): void {');
  for (const f of fields) {
    const n = names(f);
    if (f.proto === null) {
      out.push(`  ${CONTEXT[f.column]}`);
      continue;
    }
    switch (f.rowType) {
      case 'Int64': out.push(`  w.i64parts(${n.lo}, ${n.hi});`); break;
      case 'Float64': out.push(`  w.f64c(d[${n.d}]!);`); break;
      case 'Float32': out.push(`  w.f32c(fl[${n.fl}]!);`); break;
      case 'UInt8': out.push(`  w.u8(${n.v});`); break;
      case 'Int32': out.push(`  w.i32(${n.v});`); break;
      case 'String': out.push(`  rbString(w, ${n.s}, ${n.e});`); break;
      case 'Enum8': out.push(`  w.u8(${n.v} >= 0 && ${n.v} <= ENUM_MAX ? ${n.v} : 0);`); break;
      case 'Array(String)': out.push(`  w.varUint(${n.count});`, `  for (let i = 0; i < ${n.count}; i++) rbString(w, ${n.v}[i * 2]!, ${n.v}[i * 2 + 1]!);`); break;
      default: throw new Error(`fast reader: ${f.column}: row type ${f.rowType}`);
    }
  }
  out.push('}');

  // The live message: literal text is gathered and written in one call before each value.
  const body = [];
  let lit = '';
  // A boolean's two spellings, written with the text that follows it (one call either way).
  let pendingBool = null;
  const flush = (indent) => {
    if (pendingBool !== null) body.push(`${indent}w.ascii(${pendingBool.v} ? ${q(`${pendingBool.before}true${lit}`)} : ${q(`${pendingBool.before}false${lit}`)});`);
    else if (lit !== '') body.push(`${indent}w.ascii(${q(lit)});`);
    pendingBool = null;
    lit = '';
  };
  const value = (f, indent) => {
    const n = names(f);
    if (f.proto === null) {
      flush(indent);
      body.push(`${indent}num(w, receivedAtMs);`);
      return;
    }
    switch (f.rowType) {
      case 'Int64': flush(indent); body.push(`${indent}w.ascii(int64Text(${n.lo}, ${n.hi}));`); break;
      case 'Float64': flush(indent); body.push(`${indent}num(w, d[${n.d}]!);`); break;
      case 'Float32': flush(indent); body.push(`${indent}num(w, fl[${n.fl}]!);`); break;
      case 'Int32': flush(indent); body.push(`${indent}w.ascii(String(${n.v}));`); break;
      case 'UInt8':
        if (pendingBool !== null) flush(indent);
        pendingBool = { v: n.v, before: lit };
        lit = '';
        break;
      case 'String': flush(indent); body.push(`${indent}jsonString(w, ${n.s}, ${n.e});`); break;
      case 'Enum8': flush(indent); body.push(`${indent}w.ascii(ENUM_JSON[${n.v} >= 0 && ${n.v} <= ENUM_MAX ? ${n.v} : 0]!);`); break;
      case 'Array(String)':
        lit += '[';
        flush(indent);
        body.push(`${indent}for (let i = 0; i < ${n.count}; i++) {`, `${indent}  if (i > 0) w.u8(0x2c);`, `${indent}  jsonString(w, ${n.v}[i * 2]!, ${n.v}[i * 2 + 1]!);`, `${indent}}`);
        lit = ']';
        break;
      default: throw new Error(`fast reader: ${f.column}: row type ${f.rowType}`);
    }
  };
  const byColumn = new Map(fields.map((f) => [f.column, f]));
  const nodes = (list, indent, first) => {
    list.forEach((x, i) => {
      if (!(first && i === 0)) lit += `${i === 0 ? '' : ','}"${x.key}":`;
      if ('field' in x) {
        value(x.field, indent);
        return;
      }
      if (x.key === live.NULLABLE_OBJECT) {
        const n = names(byColumn.get(live.NULL_WHEN_EMPTY));
        const key = lit;
        lit = '';
        flush(indent);
        lit = key;
        body.push(`${indent}if (${n.e} === ${n.s}) {`, `${indent}  w.ascii(${q(`${lit}null`)});`, `${indent}} else {`);
        lit += '{';
        nodes(x.children, `${indent}  `, false);
        lit += '}';
        flush(`${indent}  `);
        body.push(`${indent}}`);
        return;
      }
      lit += '{';
      nodes(x.children, indent, false);
      lit += '}';
    });
  };
  body.push('  w.raw(prefix);');
  nodes(live.liveTree(fields), '  ', true);
  lit += '}';
  flush('  ');
  out.push('', '/** The live "sample" message (live-json.ts writes the same from the reference path\'s values). */');
  out.push('function writeLive(w: ByteWriter, prefix: Uint8Array, receivedAtMs: number): void {', ...body, '}');
  return out.join('\n');
}
