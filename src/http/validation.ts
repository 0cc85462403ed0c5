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
import { EXPECTED_KEYWORD, LOWER_CASE_KEYWORD } from '../api/schemas/keywords.js';

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
  // Errors carry their schema, so messages can list allowed values and describe patterns in words.
  verbose: true,
};

/** Compiles request schemas: `body` strictly, `query`/`params` with text coercion. */
export class RequestValidators {
  private readonly bodyAjv = withKeywords(addFormats(new Ajv({ ...BASE, coerceTypes: false })));
  private readonly textAjv = withKeywords(addFormats(new Ajv({ ...BASE, coerceTypes: 'array', useDefaults: true })));

  /** Compiles a body schema (no coercion). */
  body(schema: TSchema): ValidateFunction {
    return this.bodyAjv.compile(schema);
  }

  /** Compiles a path-parameter or query schema (text coerced to the declared types). */
  text(schema: TSchema): ValidateFunction {
    return this.textAjv.compile(schema);
  }
}

/**
 * Teaches `ajv` our keywords: {@link FREE_FORM_KEYWORD} (depth and size bounds of free-form values),
 * {@link EXPECTED_KEYWORD} (an annotation read by the error messages) and {@link LOWER_CASE_KEYWORD}
 * (lower-cases a valid string in place: it runs after the string's own checks, so only a value that
 * already passed them is rewritten).
 */
function withKeywords(ajv: Ajv): Ajv {
  const validate: SchemaValidateFunction = (limits: FreeFormLimits, data: unknown): boolean => {
    const problem = freeFormProblem(data, limits);
    if (problem === null) return true;
    validate.errors = [{ keyword: FREE_FORM_KEYWORD, message: problem, params: {} }];
    return false;
  };
  ajv.addKeyword({ keyword: FREE_FORM_KEYWORD, schemaType: 'object', errors: true, validate });
  ajv.addKeyword({ keyword: EXPECTED_KEYWORD, schemaType: 'string' });
  ajv.addKeyword({
    keyword: LOWER_CASE_KEYWORD,
    type: 'string',
    schemaType: 'boolean',
    modifying: true,
    errors: false,
    validate: (on: boolean, data: string, _schema?: unknown, ctx?: { parentData: Record<string | number, unknown>; parentDataProperty: string | number }): boolean => {
      if (on && ctx !== undefined) ctx.parentData[ctx.parentDataProperty] = data.toLowerCase();
      return true;
    },
  });
  return ajv;
}

/** Where a validation error is and what is wrong there, both safe to show (no value is echoed). */
export interface ValidationProblem {
  /** The field path (`schedule.kind`, `robot_ids[2]`), '' for the value itself. */
  path: string;
  /** What is wrong, e.g. `must be one of: pause, resume, cancel, abort`. */
  problem: string;
}

/**
 * One readable line for the first validation error: the field path and what it must be. Allowed
 * values are listed; a pattern is described by its `x-expected` text (never the raw regex).
 */
export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  const { path, problem } = describeProblem(errors);
  return path === '' ? problem : `${path} ${problem}`;
}

/** {@link describeErrors} split into the field path and the problem (path parameters and headers name the field themselves). */
export function describeProblem(errors: ErrorObject[] | null | undefined): ValidationProblem {
  const list = errors ?? [];
  const e = chooseError(list);
  if (e === undefined) return { path: '', problem: 'is invalid' };
  const path = fieldPath(e.instancePath);
  const params = e.params as Record<string, unknown>;
  const child = (name: unknown): string => `${path}${path === '' ? '' : '.'}${String(name)}`;
  switch (e.keyword) {
    case 'additionalProperties':
      return { path: '', problem: `unknown field '${child(params.additionalProperty ?? '?')}'` };
    case 'required':
      return { path: '', problem: `missing required field '${child(params.missingProperty ?? '?')}'` };
    case FREE_FORM_KEYWORD:
      return { path, problem: e.message ?? 'is too large' };
    case 'enum':
      return { path, problem: `must be one of: ${(params.allowedValues as unknown[]).map(literal).join(', ')}` };
    case 'const':
      return { path, problem: `must be ${literal(params.allowedValue)}` };
    case 'pattern':
    case 'format':
      return { path, problem: `must be ${expected(e.parentSchema) ?? (e.keyword === 'format' ? `a valid ${String(params.format)}` : 'in the documented format')}` };
    case 'type':
      return { path, problem: `must be ${article(String(params.type))}` };
    case 'anyOf':
    case 'oneOf':
      return { path, problem: `must be one of: ${(e.schema as Record<string, unknown>[]).map(alternative).join(', ')}` };
    default:
      return { path, problem: e.message ?? 'is invalid' };
  }
}

/**
 * The error to report. ajv lists each failed branch of a union before the union's own error; when
 * the value fits exactly one branch by type (a string for `Nullable(Uuid)`) or by its required keys
 * (`{interval: …}` for a schedule kind), that branch's error is the useful one, else the union's.
 */
function chooseError(errors: ErrorObject[]): ErrorObject | undefined {
  const first = errors[0];
  if (first === undefined) return undefined;
  const union = errors.find((x) => (x.keyword === 'anyOf' || x.keyword === 'oneOf') && first.schemaPath.startsWith(`${x.schemaPath}/`));
  if (union === undefined) return first;
  const branches = union.schema as Record<string, unknown>[];
  const fitting = branches.flatMap((b, i) => (fits(b, union.data) ? [i] : []));
  // A wrong literal is best answered with the union's whole list ("must be one of: once, …").
  if (fitting.length !== 1 || 'const' in branches[fitting[0]!]!) return union;
  const prefix = `${union.schemaPath}/${fitting[0]}/`;
  const inBranch = errors.filter((x) => x.schemaPath.startsWith(prefix));
  return inBranch.length > 0 ? chooseError(inBranch) : union;
}

/** Whether `data` has the JSON type (and, for an object, every required key) of a union branch. */
function fits(branch: Record<string, unknown>, data: unknown): boolean {
  if ('const' in branch) return typeof branch.const === typeof data && branch.const !== null && data !== null;
  const type = branch.type ?? (Array.isArray(branch.enum) ? typeof branch.enum[0] : undefined);
  const actual = data === null ? 'null' : Array.isArray(data) ? 'array' : typeof data === 'number' && Number.isInteger(data) ? 'integer' : typeof data;
  if (type === undefined) return false;
  if (type !== actual && !(type === 'number' && actual === 'integer')) return false;
  if (actual !== 'object') return true;
  const required = Array.isArray(branch.required) ? (branch.required as string[]) : [];
  if (required.length === 0 || !required.every((k) => Object.prototype.hasOwnProperty.call(data, k))) return false;
  // A discriminating literal (`type: 'Polygon'`) must match too.
  const props = (branch.properties ?? {}) as Record<string, { const?: unknown }>;
  return Object.entries(props).every(([k, p]) => !('const' in p) || (data as Record<string, unknown>)[k] === p.const);
}

/** One alternative of a union, for "must be one of: …". */
function alternative(branch: Record<string, unknown>): string {
  if ('const' in branch) return literal(branch.const);
  if (Array.isArray(branch.enum)) return (branch.enum as unknown[]).map(literal).join(', ');
  const hint = expected(branch);
  if (hint !== undefined) return hint;
  if (branch.type === 'object' && Array.isArray(branch.required) && branch.required.length > 0) return `an object with ${(branch.required as string[]).join(', ')}`;
  return article(typeof branch.type === 'string' ? branch.type : 'value');
}

/** The schema's `x-expected` text (what a pattern or format stands for), if any. */
function expected(schema: unknown): string | undefined {
  const hint = (schema as Record<string, unknown> | undefined)?.[EXPECTED_KEYWORD];
  return typeof hint === 'string' ? hint : undefined;
}

function literal(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function article(type: string): string {
  if (type === 'null') return 'null';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** `/robot_ids/2` -> `robot_ids[2]`, `/schedule/kind` -> `schedule.kind`. */
function fieldPath(pointer: string): string {
  let out = '';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    out += /^[0-9]+$/.test(seg) ? `[${seg}]` : `${out === '' ? '' : '.'}${seg}`;
  }
  return out;
}
