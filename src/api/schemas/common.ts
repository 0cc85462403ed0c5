/**
 * Building blocks shared by every API schema. Each schema here is written once and drives request
 * validation (ajv), the TypeScript types (Static<>) and /openapi.json.
 */
import { Type, type ObjectOptions, type TSchema } from '@sinclair/typebox';
import { FREE_FORM_KEYWORD, FREE_FORM_LIMITS } from './free-form.js';
import { named } from './named.js';

/**
 * A UUID in canonical lowercase form, the only form the gateway mints. The pattern (on top of the
 * `uuid` format) rejects `urn:uuid:` prefixes and upper case, so an id either matches a stored record
 * byte for byte or is a 400, never a confusing 404.
 */
export const Uuid = Type.String({
  format: 'uuid',
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  description: 'UUID, canonical lowercase form.',
});

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
