/**
 * A tool's output schema, from the TypeBox response schemas of its route: what `structuredContent`
 * holds is the REST reply's JSON, one of the route's declared response bodies or the catalog's error
 * body. Prose (`description`, `title`, `examples`) is left out: an agent reads the structure, and the
 * prose is in /openapi.json; the schema is otherwise the very one the contract test checks replies with.
 */
import type { TSchema } from '@sinclair/typebox';
import type { RouteDef } from '../route.js';
import { ErrorBody } from '../schemas/common.js';

type Json = Record<string, unknown>;

const PROSE = new Set(['description', 'title', 'examples']);
/** Keywords whose value is a map of name -> schema (the names are data, never dropped). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is one schema. */
const SCHEMA_ONE = new Set(['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST = new Set(['anyOf', 'allOf', 'oneOf', 'prefixItems']);

/** `schema` as plain JSON Schema without prose (TypeBox's symbol-keyed metadata dropped by JSON). */
function structureOf(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    if (PROSE.has(k)) continue;
    if (SCHEMA_MAPS.has(k) && v !== null && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v as Json).map(([name, s]) => [name, structureOf(s)]));
    } else if (SCHEMA_ONE.has(k)) {
      out[k] = structureOf(v);
    } else if (SCHEMA_LIST.has(k) && Array.isArray(v)) {
      out[k] = v.map(structureOf);
    } else {
      out[k] = JSON.parse(JSON.stringify(v)) as unknown; // const, enum, default, format...: data as it is
    }
  }
  return out;
}

/** The output schema of `route`'s tool: `{type: 'object', anyOf: [each distinct response body, ErrorBody]}`. */
export function outputSchemaOf(route: RouteDef): Json {
  const bodies = new Set<TSchema>();
  for (const spec of Object.values(route.responses)) if (spec.schema !== undefined) bodies.add(spec.schema);
  bodies.add(ErrorBody);
  const texts = new Set<string>();
  const anyOf: unknown[] = [];
  for (const s of bodies) {
    const plain = structureOf(s);
    const text = JSON.stringify(plain);
    if (!texts.has(text)) {
      texts.add(text);
      anyOf.push(plain);
    }
  }
  return { type: 'object', anyOf };
}
