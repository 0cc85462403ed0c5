/**
 * The largest compact JSON text a schema admits, estimated from above where the schema bounds it:
 * strings at `maxLength` characters of 3 bytes each (UTF-8, as JSON.stringify writes them;
 * a client escaping every character as `\uXXXX` could exceed it), numbers at 24 characters,
 * arrays at `maxItems`, objects with every declared property (and `maxProperties` extra ones, their
 * keys at `propertyNames.maxLength` or 200 characters). Infinity where a string, array or open
 * object has no bound. Free-form values (`{}`, an object with no declared properties) count as
 * their empty form: the estimate is then low, which the caller accepts for those routes.
 */
// TypeBox schemas are plain JSON Schema objects at run time.
type Schema = any;

/** Estimated largest compact JSON text `s` admits, in bytes. */
export function maxJsonBytes(s: Schema, depth = 0): number {
  if (depth > 30) return Infinity;
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives !== undefined) return Math.max(...alternatives.map((x: Schema) => maxJsonBytes(x, depth + 1)));
  if (s.allOf !== undefined) return s.allOf.reduce((a: number, x: Schema) => a + maxJsonBytes(x, depth + 1), 0);
  if (s.const !== undefined) return JSON.stringify(s.const).length;
  if (s.enum !== undefined) return Math.max(...s.enum.map((e: unknown) => JSON.stringify(e).length));
  switch (s.type) {
    case 'string':
      if (s.maxLength !== undefined) return s.maxLength * 3 + 2;
      return s.format === 'uuid' || s.pattern !== undefined ? 80 : Infinity;
    case 'integer':
    case 'number':
      return 24;
    case 'boolean':
      return 5;
    case 'null':
      return 4;
    case 'array':
      return s.maxItems !== undefined ? 2 + s.maxItems * (maxJsonBytes(s.items ?? {}, depth + 1) + 1) : Infinity;
    case 'object': {
      let total = 2;
      for (const [k, v] of Object.entries(s.properties ?? {})) total += k.length + 4 + maxJsonBytes(v, depth + 1);
      const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : s.patternProperties !== undefined ? {} : null;
      if (extra !== null) total += s.maxProperties !== undefined ? s.maxProperties * ((s.propertyNames?.maxLength ?? 200) * 3 + 4 + maxJsonBytes(extra, depth + 1)) : Infinity;
      return total;
    }
    default:
      return Array.isArray(s.type) ? 64 : 2;
  }
}
