/**
 * Validates the responses an e2e test file received (response-log.ts) against the gateway's own
 * `/openapi.json`: each response of a published operation must match the schema published for its
 * status (JSON Schema 2020-12, with the document's formats); an error status the operation does not
 * publish (the HTTP layer's 404, 405, 413 …) must still be the published error body. Responses to
 * paths the document does not publish are not checked. The document is added to ajv once and each
 * (operation, status) validator compiled once per test file.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { loggedResponses, type LoggedResponse } from './response-log.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (a: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

interface Op {
  id: string;
  method: string;
  path: string;
  pattern: RegExp;
  responses: Json;
}

/** JSON pointer escaping (RFC 6901). */
const ptr = (s: string): string => s.replaceAll('~', '~0').replaceAll('/', '~1');
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

class Checker {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  private readonly ops: Op[] = [];
  private readonly validators = new Map<string, ValidateFunction | null>();

  constructor(private readonly doc: Json) {
    this.ajv.addSchema(doc, 'openapi');
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        const pattern = new RegExp(`^${path.split(/\{\w+\}/).map(escapeRegExp).join('[^/]+')}$`);
        this.ops.push({ id: (op as Json).operationId as string, method: method.toUpperCase(), path, pattern, responses: (op as Json).responses as Json });
      }
    }
    // Literal paths before templated ones (`/v1/sessions/current` before `/v1/sessions/{id}`).
    this.ops.sort((a, b) => Number(a.path.includes('{')) - Number(b.path.includes('{')));
  }

  /** The problem with one response, or null when it matches (or is not a published operation's). */
  check(r: LoggedResponse): string | null {
    const path = r.url.split('?')[0]!;
    const method = r.method === 'HEAD' ? 'GET' : r.method;
    const op = this.ops.find((o) => o.method === method && o.pattern.test(path));
    if (op === undefined || r.method === 'HEAD') return null;
    if (!r.contentType.startsWith('application/json')) return null;
    const validate = this.validatorFor(op, r.status);
    if (validate === undefined) return `${op.id} ${r.status}: status not published (${r.method} ${r.url})`;
    if (validate === null) return null;
    return validate(r.body) ? null : `${op.id} ${r.status} (${r.method} ${r.url}): ${JSON.stringify(validate.errors?.slice(0, 3))} ${JSON.stringify(r.body).slice(0, 500)}`;
  }

  /** undefined: a success status the operation does not publish; null: no JSON body published. */
  private validatorFor(op: Op, status: number): ValidateFunction | null | undefined {
    const key = `${op.id} ${status}`;
    if (this.validators.has(key)) return this.validators.get(key)!;
    const raw = op.responses[String(status)] as Json | undefined;
    let at: string;
    if (raw === undefined) {
      if (status < 400) return undefined;
      at = '/components/schemas/ErrorBody';
    } else if (typeof raw.$ref === 'string') {
      const target = raw.$ref.slice(2).split('/').reduce((n: Json, k: string) => n[k.replaceAll('~1', '/').replaceAll('~0', '~')] as Json, this.doc);
      at = target.content?.['application/json'] ? `${raw.$ref.slice(1)}/content/application~1json/schema` : '';
    } else {
      at = raw.content?.['application/json'] ? `/paths/${ptr(op.path)}/${op.method.toLowerCase()}/responses/${status}/content/application~1json/schema` : '';
    }
    const v = at === '' ? null : this.ajv.compile({ $ref: `openapi#${at}` });
    this.validators.set(key, v);
    return v;
  }
}

/** The problems of `responses` against one document (a fresh checker: compiles what they need). */
export function checkAgainst(doc: Json, responses: readonly LoggedResponse[]): string[] {
  const checker = new Checker(doc);
  return responses.map((r) => checker.check(r)).filter((p): p is string => p !== null);
}

/**
 * The responses recorded in this test file that do not match /openapi.json, one line each (empty:
 * all match). Awaits each gateway's document, fetched when its first response was recorded.
 */
export async function responsesNotMatchingOpenApi(): Promise<string[]> {
  const { responses, dropped, documents } = loggedResponses();
  const problems: string[] = [];
  const checkers = new Map<string, Checker | null>();
  let shared: Checker | null = null;
  for (const [base, pending] of documents) {
    const doc = await pending;
    if (doc instanceof Error || doc === null || typeof doc !== 'object' || !('paths' in doc)) {
      problems.push(`${base}/openapi.json could not be read: ${doc instanceof Error ? doc.message : JSON.stringify(doc).slice(0, 200)}`);
      checkers.set(base, null);
      continue;
    }
    // Every gateway of a build serves the same operations: one checker (one compile per operation) for all.
    shared ??= new Checker(doc);
    checkers.set(base, shared);
  }
  for (const r of responses) {
    const problem = checkers.get(r.base)?.check(r) ?? null;
    if (problem !== null) problems.push(problem);
  }
  if (dropped > 0) problems.push(`${dropped} responses over the log's bound were not validated`);
  return problems;
}
