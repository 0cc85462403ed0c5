/**
 * Building blocks shared by every API schema. Each schema here is written once and drives request
 * validation (ajv), the TypeScript types (Static<>) and /openapi.json.
 */
import { Type, type ObjectOptions, type TSchema } from '@sinclair/typebox';
import { FREE_FORM_KEYWORD, FREE_FORM_LIMITS } from './free-form.js';
import { EXPECTED_KEYWORD, LOWER_CASE_KEYWORD } from './keywords.js';
import { named } from './named.js';

/**
 * A UUID: accepted in any letter case, lower-cased once it validated (so it matches stored records
 * byte for byte), and always returned lower-case (docs/api-conventions.md, UUIDs). The pattern (on top
 * of the `uuid` format) rejects `urn:uuid:` prefixes and braces.
 */
export const uuidSchema = (description = 'UUID; any letter case is accepted, returned lower-case.') =>
  Type.String({
    format: 'uuid',
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
    [EXPECTED_KEYWORD]: 'a UUID (8-4-4-4-12 hex digits)',
    [LOWER_CASE_KEYWORD]: true,
    description,
  });

export const Uuid = uuidSchema();

/**
 * A free-form object (stored and forwarded as given, no schema for its members), bounded in depth and
 * size: at most 32 levels of nesting and 10,000 values (free-form.ts, docs/http-hardening.md).
 * The only kind of open object the API publishes: every other object schema is closed
 * (`additionalProperties: false`), which the contract test checks (test/e2e/contract.test.ts).
 */
export const FreeForm = (options: ObjectOptions = {}) =>
  Type.Object({}, { additionalProperties: true, ...options, [FREE_FORM_KEYWORD]: FREE_FORM_LIMITS });

/** `T` or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Spec, Errors: `{error, code}` plus an optional structured `details` object. */
export const ErrorBody = named('ErrorBody', Type.Object(
  {
    error: Type.String({ description: 'Human-readable message.' }),
    code: named('ErrorCode', Type.Union(
      [
        Type.Literal('bad_request'),
        Type.Literal('unauthorized'),
        Type.Literal('forbidden'),
        Type.Literal('not_found'),
        Type.Literal('conflict'),
        Type.Literal('partial_failure'),
        Type.Literal('policy_rejected'),
        Type.Literal('rate_limited'),
        Type.Literal('internal'),
        Type.Literal('unavailable'),
      ],
      { description: 'Machine code.' },
    )),
    details: Type.Optional(FreeForm({ description: 'Structured results, on some errors.' })),
  },
  { additionalProperties: false },
));
