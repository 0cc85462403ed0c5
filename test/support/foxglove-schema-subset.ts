/**
 * The rules of Foxglove's own JSON Schema reader (the app turns a channel's schema into message
 * definitions for its panels and refuses the rest): the root and every nested schema is
 * `"type": "object"`; each property is either `oneOf` constants that are all numbers (an enum) or one
 * plain `type` of boolean, string, number, integer, object or array, and array items likewise (no
 * nested arrays). No `null`, no type lists, no other unions.
 */
export function foxgloveSchemaProblems(schema: Record<string, unknown>, path = '$'): string[] {
  if (schema.type !== 'object') return [`${path}: type must be "object", got ${JSON.stringify(schema.type)}`];
  const out: string[] = [];
  for (const [name, raw] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) {
    const p = `${path}.${name}`;
    if (Array.isArray(raw.oneOf)) {
      if (!(raw.oneOf as { const?: unknown }[]).every((a) => typeof a.const === 'number')) out.push(`${p}: oneOf alternatives must all be number constants`);
      continue;
    }
    switch (raw.type) {
      case 'boolean':
      case 'string':
      case 'number':
      case 'integer':
        break;
      case 'object':
        out.push(...foxgloveSchemaProblems(raw, p));
        break;
      case 'array': {
        const items = raw.items as Record<string, unknown>;
        if (items.type === 'object') out.push(...foxgloveSchemaProblems(items, `${p}[]`));
        else if (!['boolean', 'string', 'number', 'integer'].includes(items.type as string)) out.push(`${p}[]: unsupported item type ${JSON.stringify(items.type)}`);
        break;
      }
      default:
        out.push(`${p}: unsupported type ${JSON.stringify(raw.type)}`);
    }
  }
  return out;
}
