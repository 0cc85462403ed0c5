/**
 * Schema keywords of our own (OpenAPI allows `x-` extensions), taught to ajv in src/http/validation.ts.
 */

/**
 * Annotation: what a `pattern` or `format` stands for, in words ("a UUID"). Validation messages say
 * "must be <x-expected>" instead of showing the raw regex (docs/api-conventions.md, Errors).
 */
export const EXPECTED_KEYWORD = 'x-expected';

/**
 * Normalisation: a string accepted in any letter case is lower-cased in place once it validated, so
 * handlers, keys and responses only ever see the canonical form (UUIDs, docs/api-conventions.md).
 */
export const LOWER_CASE_KEYWORD = 'x-lower-case';
