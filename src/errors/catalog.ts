/**
 * The one error catalog. Every error the API can return is declared here with a stable machine `code`
 * from the spec's set, an HTTP status and a message template. docs/errors.md mirrors this table and
 * test/errors/catalog.test.ts keeps the two in step.
 */

/** Machine codes allowed by the service interface (Errors section). */
export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'partial_failure'
  | 'policy_rejected'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

interface CatalogEntry {
  readonly code: ErrorCode;
  readonly status: number;
  /** Message with `{name}` placeholders filled from the params given to {@link apiError}. */
  readonly template: string;
}

export const ERROR_CATALOG = {
  malformed_json: { code: 'bad_request', status: 400, template: 'Request body is not valid JSON.' },
  invalid_body: { code: 'bad_request', status: 400, template: 'Invalid request body: {detail}.' },
  invalid_query: { code: 'bad_request', status: 400, template: 'Invalid query: {detail}.' },
  invalid_path: { code: 'bad_request', status: 400, template: 'Invalid path parameter {param}: {detail}.' },
  unsupported_media_type: { code: 'bad_request', status: 415, template: 'Content-Type must be application/json.' },
  body_too_large: { code: 'bad_request', status: 413, template: 'Request body exceeds {limit} bytes.' },
  method_not_allowed: { code: 'bad_request', status: 405, template: 'Method {method} is not allowed on {path}.' },
  ack_wait_conflict: { code: 'bad_request', status: 400, template: 'Send either wait_for_ack or wait_for_ack_ms, not both.' },
  key_in_query: { code: 'bad_request', status: 400, template: 'Credentials are accepted only in the Authorization header, never in the URL.' },
  unauthorized: { code: 'unauthorized', status: 401, template: 'Missing, invalid, expired or revoked credential.' },
  forbidden_permission: { code: 'forbidden', status: 403, template: 'This key lacks the {permission} permission.' },
  forbidden_org: { code: 'forbidden', status: 403, template: 'This key cannot access organization {orgId}.' },
  forbidden_fleet: { code: 'forbidden', status: 403, template: 'This key is bound to another fleet.' },
  route_not_found: { code: 'not_found', status: 404, template: 'No route for {method} {path}.' },
  fleet_not_found: { code: 'not_found', status: 404, template: 'Fleet {fleetId} was not found.' },
  robot_not_found: { code: 'not_found', status: 404, template: 'Robot {robotId} was not found.' },
  action_not_supported: { code: 'bad_request', status: 400, template: 'Action {action} is not supported yet.' },
  too_many_targets: { code: 'bad_request', status: 400, template: 'At most {max} robots per request.' },
  no_targets: { code: 'bad_request', status: 400, template: 'Name at least one robot with robot_id or robot_ids.' },
  rate_limited: { code: 'rate_limited', status: 429, template: 'Rate limit exceeded; retry after {retryAfterS} s.' },
  all_targets_failed: { code: 'unavailable', status: 502, template: 'Every target of the command failed.' },
  some_targets_failed: { code: 'partial_failure', status: 207, template: '{failed} of {count} targets failed; see outcomes.' },
  agent_rejected: { code: 'policy_rejected', status: 422, template: 'The robot agent rejected the command: {reason}.' },
  outbox_full: { code: 'unavailable', status: 503, template: 'Robot {robotId} has too many undelivered commands; retry later.' },
  ack_waiters_full: { code: 'unavailable', status: 503, template: 'Too many requests are waiting for robot acknowledgements; retry later.' },
  unavailable: { code: 'unavailable', status: 503, template: '{what} is temporarily unavailable.' },
  shutting_down: { code: 'unavailable', status: 503, template: 'The gateway is shutting down.' },
  internal: { code: 'internal', status: 500, template: 'Unexpected server error.' },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorId = keyof typeof ERROR_CATALOG;

/** An API error: carries its catalog id so every response is built from the catalog. */
export class ApiError extends Error {
  readonly id: ErrorId;
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(id: ErrorId, message: string, headers: Record<string, string> = {}, details?: Record<string, unknown>) {
    super(message);
    const entry: CatalogEntry = ERROR_CATALOG[id];
    this.id = id;
    this.code = entry.code;
    this.status = entry.status;
    this.headers = headers;
    this.details = details;
  }

  /** The spec's error body: `{error, code}` plus optional `details`. */
  toBody(): { error: string; code: ErrorCode; details?: Record<string, unknown> } {
    return this.details === undefined
      ? { error: this.message, code: this.code }
      : { error: this.message, code: this.code, details: { ...this.details } };
  }
}

/** Fills a catalog template. Unknown placeholders are left visible rather than silently dropped. */
export function formatTemplate(template: string, params: Readonly<Record<string, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const v = params[name];
    return v === undefined ? whole : String(v);
  });
}

/**
 * Builds an {@link ApiError} from the catalog.
 * @param id catalog entry
 * @param params values for the template's placeholders
 * @param extra response headers (e.g. Retry-After) and structured details
 */
export function apiError(
  id: ErrorId,
  params: Readonly<Record<string, string | number>> = {},
  extra: { headers?: Record<string, string>; details?: Record<string, unknown> } = {},
): ApiError {
  return new ApiError(id, formatTemplate(ERROR_CATALOG[id].template, params), extra.headers, extra.details);
}
