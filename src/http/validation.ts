/**
 * ajv set-up for request validation. Schemas are the routes' TypeBox schemas, compiled once when the
 * router is built; nothing is compiled per request.
 *
 * Two instances because bodies and query strings differ on purpose: a JSON body is validated as sent
 * (a string "3" is not the number 3), while a query string only carries text, so its validator coerces
 * text to the declared types (and a lone value to a one-element array).
 */
import { Ajv, type ErrorObject, type Options, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { FREE_FORM_KEYWORD, freeFormProblem, type FreeFormLimits } from '../api/schemas/free-form.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object on some builds.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

const BASE: Options = {
  strict: true,
  allErrors: false,
  allowUnionTypes: true,
  useDefaults: false,
  removeAdditional: false,
  validateFormats: true,
};

/** Compiles request schemas: `body` strictly, `query`/`params` with text coercion. */
export class RequestValidators {
  private readonly bodyAjv = withFreeForm(addFormats(new Ajv({ ...BASE, coerceTypes: false })));
  private readonly textAjv = withFreeForm(addFormats(new Ajv({ ...BASE, coerceTypes: 'array', useDefaults: true })));

  /** Compiles a body schema (no coercion). */
  body(schema: TSchema): ValidateFunction {
    return this.bodyAjv.compile(schema);
  }

  /** Compiles a path-parameter or query schema (text coerced to the declared types). */
  text(schema: TSchema): ValidateFunction {
    return this.textAjv.compile(schema);
  }
}

/** Teaches `ajv` the {@link FREE_FORM_KEYWORD} keyword (depth and size bounds of free-form values). */
function withFreeForm(ajv: Ajv): Ajv {
  const validate: SchemaValidateFunction = (limits: FreeFormLimits, data: unknown): boolean => {
    const problem = freeFormProblem(data, limits);
    if (problem === null) return true;
    validate.errors = [{ keyword: FREE_FORM_KEYWORD, message: problem, params: {} }];
    return false;
  };
  ajv.addKeyword({ keyword: FREE_FORM_KEYWORD, schemaType: 'object', errors: true, validate });
  return ajv;
}

/** One readable line for the first validation error, naming the offending field; never echoes values. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (e === undefined) return 'invalid value';
  const where = e.instancePath === '' ? 'value' : e.instancePath.slice(1).replaceAll('/', '.');
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty?: string }).additionalProperty ?? '?';
    return `${where === 'value' ? '' : `${where}: `}unknown field '${extra}'`;
  }
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty?: string }).missingProperty ?? '?';
    return `${where === 'value' ? '' : `${where}: `}missing required field '${missing}'`;
  }
  if (e.keyword === FREE_FORM_KEYWORD) return `${where}: ${e.message ?? 'too large'}`;
  return `${where} ${e.message ?? 'is invalid'}`;
}
