/**
 * Request fields of robot commands as a surface publishes them. A command's declaration
 * (src/commands/catalog) lists its fields in camelCase with a TypeBox schema; a body spells them in
 * snake_case. A surface may publish its own schema for a field (a named component, its own
 * description or bound, as it was first published); any other field is published with the
 * declaration's schema, so a new command needs no change here.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { bodyName, inPublishedOrder, type AnyCommandDeclaration } from '../../commands/catalog/index.js';

/** One field of a surface: its camelCase name, its body name and the schema published for it. */
export interface SurfaceField {
  field: string;
  body: string;
  schema: TSchema;
  /** Required by the declaration (not `Type.Optional`). */
  required: boolean;
}

const OPTIONAL = Symbol.for('TypeBox.Optional');

/** Whether a declaration's field is optional (`Type.Optional`). */
function isOptional(schema: TSchema): boolean {
  return (schema as unknown as Record<symbol, unknown>)[OPTIONAL] === 'Optional';
}

/** The fields of one declaration, with the surface's schemas. */
export function fieldsOf(d: AnyCommandDeclaration, own: Readonly<Record<string, TSchema>>): SurfaceField[] {
  return Object.entries(d.fields.properties as Record<string, TSchema>).map(([field, schema]) => ({
    field,
    body: bodyName(field),
    schema: own[field] ?? schema,
    required: !isOptional(schema),
  }));
}

/** The fields of several declarations (each once), in the surface's published order. */
export function fieldsOfAll(ds: readonly AnyCommandDeclaration[], own: Readonly<Record<string, TSchema>>, pinned: readonly string[]): SurfaceField[] {
  const byBody = new Map<string, SurfaceField>();
  for (const d of ds) for (const f of fieldsOf(d, own)) if (!byBody.has(f.body)) byBody.set(f.body, f);
  return inPublishedOrder([...byBody.keys()], pinned).map((b) => byBody.get(b)!);
}

/** Body properties of `fields`: each as published, optional when `allOptional` or the declaration says so. */
export function bodyProperties(fields: readonly SurfaceField[], allOptional: boolean): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  for (const f of fields) out[f.body] = allOptional || !f.required ? Type.Optional(f.schema) : f.schema;
  return out;
}

/** A body's values of `fields`, by camelCase name (absent ones left out). */
export function fieldValues(body: Readonly<Record<string, unknown>>, fields: readonly SurfaceField[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (body[f.body] !== undefined) out[f.field] = body[f.body];
  return out;
}
