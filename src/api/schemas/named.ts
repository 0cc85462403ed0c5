/**
 * Component names for schemas. A schema passed through {@link named} is published once in
 * /openapi.json under `components.schemas.<name>` and referenced (`$ref`) wherever it is used, so a
 * client generated from the document gets one type per resource (`RobotView`, `Delivery`, ...).
 *
 * The name rides on the schema object under a symbol: ajv and JSON ignore symbol keys, so the very
 * object the router compiles is unchanged, and copies TypeBox makes (`Type.Optional`, spreads) keep
 * the name. src/api/openapi.ts hoists named schemas and refuses two different schemas under one name.
 */
import type { TSchema } from '@sinclair/typebox';

const SCHEMA_NAME = Symbol.for('fleetgw.schemaName');

const NAME_SHAPE = /^[A-Z][A-Za-z0-9]*$/;

/**
 * Marks `schema` as the component `name` and returns it (the same object).
 * @throws Error for a name that is not PascalCase
 */
export function named<T extends TSchema>(name: string, schema: T): T {
  if (!NAME_SHAPE.test(name)) throw new Error(`schema name must be PascalCase: ${name}`);
  (schema as unknown as Record<symbol, string>)[SCHEMA_NAME] = name;
  return schema;
}

/** The component name of a schema node, or undefined. */
export function schemaName(node: object): string | undefined {
  const name = (node as Record<symbol, unknown>)[SCHEMA_NAME];
  return typeof name === 'string' ? name : undefined;
}
