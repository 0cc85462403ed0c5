import { it } from 'vitest';
import { withOfflineRoutes } from '../../src/gateway/openapi-document.js';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type S = any;
function max(s: S, depth = 0): number {
  if (depth > 30) return Infinity;
  if (s.anyOf || s.oneOf) return Math.max(...(s.anyOf ?? s.oneOf).map((x: S) => max(x, depth + 1)));
  if (s.allOf) return s.allOf.reduce((a: number, x: S) => a + max(x, depth + 1), 0);
  if (s.const !== undefined) return JSON.stringify(s.const).length;
  if (s.enum) return Math.max(...s.enum.map((e: unknown) => JSON.stringify(e).length));
  switch (s.type) {
    case 'string': return s.maxLength !== undefined ? s.maxLength * 6 + 2 : (s.format === 'uuid' || s.pattern ? 80 : Infinity);
    case 'integer': case 'number': return 24;
    case 'boolean': return 5;
    case 'null': return 4;
    case 'array': return s.maxItems !== undefined ? 2 + s.maxItems * (max(s.items ?? {}, depth + 1) + 1) : Infinity;
    case 'object': {
      let t = 2;
      for (const [k, v] of Object.entries(s.properties ?? {})) t += k.length + 4 + max(v, depth + 1);
      if (s.additionalProperties && typeof s.additionalProperties === 'object') t += s.maxProperties !== undefined ? s.maxProperties * (200 + max(s.additionalProperties, depth + 1)) : Infinity;
      else if (s.patternProperties) t += s.maxProperties !== undefined ? s.maxProperties * 300 : Infinity;
      return t;
    }
    default: return Array.isArray(s.type) ? 64 : Infinity;
  }
}
it('sizes', async () => {
  await withOfflineRoutes(({ routes }) => {
    for (const r of routes) if (r.body) console.log(`SIZE ${r.method} ${r.path} ${r.maxBodyBytes ?? '-'} ${max(r.body)}`);
  });
});
