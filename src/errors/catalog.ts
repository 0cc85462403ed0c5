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
  cursor_invalid: { code: 'bad_request', status: 400, template: 'Invalid {param}: {detail}.' },
  invalid_path: { code: 'bad_request', status: 400, template: 'Invalid path parameter {param}: {detail}.' },
  unsupported_media_type: { code: 'bad_request', status: 415, template: 'Content-Type must be application/json.' },
  body_too_large: { code: 'bad_request', status: 413, template: 'Request body exceeds {limit} bytes.' },
  body_read_timeout: { code: 'bad_request', status: 408, template: 'The request body did not arrive within {seconds} s of its headers; the connection is closed.' },
  method_not_allowed: { code: 'bad_request', status: 405, template: 'Method {method} is not allowed on {path}.' },
  ack_wait_conflict: { code: 'bad_request', status: 400, template: 'Send either wait_for_ack or wait_for_ack_ms, not both.' },
  ambiguous_framing: { code: 'bad_request', status: 400, template: 'Ambiguous message framing: {detail}; the connection is closed.' },
  length_required: { code: 'bad_request', status: 411, template: 'Chunked request bodies are not accepted: send the body with Content-Length; the connection is closed.' },
  headers_too_large: { code: 'bad_request', status: 431, template: 'The request line and headers exceed {limit} bytes.' },
  // Answered before a request reaches the router: by the head deadline (src/http/head-deadline.ts), and
  // by uWebSockets.js itself with the strings scripts/patch-uws.mjs writes into its binary.
  request_head_incomplete: { code: 'bad_request', status: 400, template: 'No complete request line and headers within {seconds} s (a line ended by a bare CR or LF, or an obs-fold line, never completes them); the connection is closed.' },
  uws_http_version: { code: 'bad_request', status: 505, template: 'Only HTTP/1.1 is served.' },
  uws_head_too_large: { code: 'bad_request', status: 431, template: 'The request head exceeds 65536 bytes or 98 header lines.' },
  uws_malformed_request: { code: 'bad_request', status: 400, template: 'Malformed request.' },
  duplicate_header: { code: 'bad_request', status: 400, template: 'Header {header} must appear only once.' },
  invalid_header: { code: 'bad_request', status: 400, template: 'Invalid header {header}: {detail}.' },
  key_in_query: { code: 'bad_request', status: 400, template: 'Credentials are accepted only in the Authorization header, never in the URL.' },
  unauthorized: { code: 'unauthorized', status: 401, template: 'Missing, invalid, expired or revoked credential.' },
  forbidden_permission: { code: 'forbidden', status: 403, template: 'This key lacks the {permission} permission.' },
  forbidden_org: { code: 'forbidden', status: 403, template: 'This key cannot access organization {orgId}.' },
  forbidden_fleet: { code: 'forbidden', status: 403, template: 'This key is bound to another fleet.' },
  route_not_found: { code: 'not_found', status: 404, template: 'No route for {method} {path}.' },
  route_removed: { code: 'not_found', status: 404, template: '{method} {path} was removed from the API; {instead}.' },
  fleet_not_found: { code: 'not_found', status: 404, template: 'Fleet {fleetId} was not found.' },
  robot_not_found: { code: 'not_found', status: 404, template: 'Robot {robotId} was not found.' },
  action_not_supported: { code: 'bad_request', status: 400, template: 'Action {action} is not supported yet.' },
  too_many_targets: { code: 'bad_request', status: 400, template: 'At most {max} robots per request.' },
  no_targets: { code: 'bad_request', status: 400, template: 'Name at least one robot with robot_id or robot_ids.' },
  rate_limited: { code: 'rate_limited', status: 429, template: 'Rate limit exceeded; retry after {retryAfterS} s.' },
  auth_throttled: { code: 'rate_limited', status: 429, template: 'Too many failed authentication attempts from this address; retry after {retryAfterS} s.' },
  all_targets_failed: { code: 'unavailable', status: 502, template: 'Every target of the command failed.' },
  some_targets_failed: { code: 'partial_failure', status: 207, template: '{failed} of {count} targets failed; see outcomes.' },
  agent_rejected: { code: 'policy_rejected', status: 422, template: 'The robot agent rejected the command: {reason}.' },
  outbox_full: { code: 'unavailable', status: 503, template: 'Robot {robotId} has too many undelivered commands; retry later.' },
  ack_waiters_full: { code: 'unavailable', status: 503, template: 'Too many requests are waiting for robot acknowledgements; retry later.' },
  bodies_queued_full: { code: 'unavailable', status: 503, template: 'Too many large request bodies are waiting to be parsed; retry after {retryAfterS} s.' },
  unavailable: { code: 'unavailable', status: 503, template: '{what} is temporarily unavailable.' },
  shutting_down: { code: 'unavailable', status: 503, template: 'The gateway is shutting down.' },
  // Idempotency (spec Conventions 3).
  idempotency_key_required: { code: 'bad_request', status: 400, template: 'This endpoint requires an Idempotency-Key header.' },
  idempotency_key_invalid: { code: 'bad_request', status: 400, template: 'Idempotency-Key must be 1 to 255 printable ASCII characters.' },
  idempotency_in_progress: { code: 'conflict', status: 409, template: 'A request with this Idempotency-Key is still running; retry after it completes.' },
  idempotency_body_mismatch: { code: 'conflict', status: 409, template: 'This Idempotency-Key was already used with a different request body.' },
  idempotency_not_replayable: { code: 'conflict', status: 409, template: 'A request with this Idempotency-Key already completed; its response held a secret and is not replayed.' },
  // Catalog: features, mission templates, the fleet operation.
  invalid_geometry: { code: 'bad_request', status: 400, template: 'Invalid geometry: {detail}.' },
  missing_field: { code: 'bad_request', status: 400, template: 'Action {action} requires {field}.' },
  robot_missing_capability: { code: 'bad_request', status: 400, template: 'Robot {robotId} does not advertise capability {capability} that the template requires.' },
  roster_last_robot: { code: 'bad_request', status: 400, template: 'Robot {robotId} is the last robot on the roster of template {missionId}; it cannot be removed.' },
  robot_not_active_member: { code: 'not_found', status: 404, template: 'Robot {robotId} is not an active member of the fleet.' },
  feature_not_found: { code: 'not_found', status: 404, template: 'Feature {featureId} was not found.' },
  template_not_found: { code: 'not_found', status: 404, template: 'Mission template {missionId} was not found.' },
  entity_not_found: { code: 'not_found', status: 404, template: 'No {kind} {id} in this fleet.' },
  kind_not_served: { code: 'unavailable', status: 503, template: 'Entity kind {kind} is not served: {detail}.' },
  operation_not_found: { code: 'not_found', status: 404, template: 'Fleet {fleetId} has no operation yet; it is created with the first mission template.' },
  feature_in_use: { code: 'conflict', status: 409, template: 'Feature {featureId} is used by mission template {missionId}.' },
  object_not_found: { code: 'not_found', status: 404, template: 'Tracked object {objectId} was not found.' },
  objects_full: { code: 'conflict', status: 409, template: 'Fleet {fleetId} holds the most tracked objects allowed ({max}); delete some first.' },
  robot_transferring: { code: 'conflict', status: 409, template: 'Robot {robotId} is moving to another fleet and takes no command for a moment; retry (it is then addressed in its new fleet).' },
  robot_rostered_alone: { code: 'conflict', status: 409, template: 'Robot {robotId} is the only robot on the roster of mission template {missionId}; assign another robot to it (or delete it) before moving the robot.' },
  robot_identity_taken: { code: 'conflict', status: 409, template: 'vda5050: the VDA 5050 identity {manufacturer}/{serialNumber} is already bound to robot {holderRobotId}; one identity binds one robot.' },
  robot_not_idle: { code: 'conflict', status: 409, template: 'Robot {robotId} is not idle ({reason}); it can move to another fleet once it is.' },
  template_in_use: { code: 'conflict', status: 409, template: 'Mission template {missionId} is {reason}.' },
  operation_mismatch: { code: 'conflict', status: 409, template: 'operation_id {operationId} is not the operation of this fleet.' },
  operation_state_conflict: { code: 'conflict', status: 409, template: 'Action {action} needs a {needed} operation; it is {state}.' },
  policy_rejected: { code: 'policy_rejected', status: 422, template: 'Robot {robotId} does not accept this command: {reason}.' },
  remote_config_not_enabled: { code: 'policy_rejected', status: 422, template: 'Robot {robotId} has not opted into {what}.' },
  robot_result_failed: { code: 'policy_rejected', status: 422, template: 'Robot {robotId} refused the request: {reason}.' },
  robot_inactive: { code: 'conflict', status: 409, template: 'Robot {robotId} is not active in its fleet; it accepts only stop.' },
  robot_offline: { code: 'unavailable', status: 503, template: 'Robot {robotId} is offline; {action} is not kept for later delivery.' },
  robot_link_conflict: { code: 'conflict', status: 409, template: 'Robot {robotId} has a link conflict (two processes use its credentials); it accepts only commands that bring it to rest, not {action}.' },
  robot_result_timeout: { code: 'unavailable', status: 503, template: 'Robot {robotId} did not report a result in time; follow /v1/robot-commands/{commandId}.' },
  alert_not_found: { code: 'not_found', status: 404, template: 'Alert {alertId} was not found.' },
  alert_resolved: { code: 'conflict', status: 409, template: 'Alert {alertId} is already resolved: its condition cleared, there is nothing left to acknowledge.' },
  command_not_found: { code: 'not_found', status: 404, template: 'Command {commandId} was not found.' },
  action_field_missing: { code: 'bad_request', status: 400, template: 'Action {action} needs {field}.' },
  action_field_unexpected: { code: 'bad_request', status: 400, template: 'Action {action} does not take {field}.' },
  force_reset_one_target: { code: 'bad_request', status: 400, template: 'force_reset takes exactly one robot.' },
  stop_all_no_targets: { code: 'bad_request', status: 400, template: 'stop_all takes no robot list; it stops every active robot of the fleet.' },
  // Field rules (docs/field-rules.md).
  field_rule_not_found: { code: 'not_found', status: 404, template: 'Field rule {directiveId} was not found.' },
  field_rule_limit: { code: 'conflict', status: 409, template: 'Fleet {fleetId} cannot take this field rule: {detail}.' },
  field_rule_delivery_incomplete: { code: 'partial_failure', status: 207, template: 'Field rule {directiveId} was saved, but {missing} of {online} online robots did not acknowledge rule set version {version}; see details.' },
  // Schedules and mission runs.
  schedule_not_found: { code: 'not_found', status: 404, template: 'Schedule {scheduleId} was not found.' },
  run_not_found: { code: 'not_found', status: 404, template: 'No {what} was found.' },
  invalid_schedule: { code: 'bad_request', status: 400, template: 'Invalid schedule: {detail}.' },
  robot_ids_invalid: { code: 'bad_request', status: 400, template: 'robot_ids: {detail}.' },
  duplicate_priority: { code: 'bad_request', status: 400, template: 'Mission {missionId} appears more than once in priorities.' },
  schedule_cancelled: { code: 'conflict', status: 409, template: 'Schedule {scheduleId} is cancelled.' },
  schedule_limit: { code: 'conflict', status: 409, template: 'Fleet {fleetId} already has {max} active schedules; cancel some first.' },
  run_finished: { code: 'conflict', status: 409, template: 'Run {runId} is {state}; {action} is not possible.' },
  // User sessions and API-key management (docs/sessions.md).
  login_failed: { code: 'unauthorized', status: 401, template: 'Wrong email or password.' },
  login_throttled: { code: 'rate_limited', status: 429, template: 'Too many failed logins for this {bound}; retry after {retryAfterS} s.' },
  csrf_failed: { code: 'forbidden', status: 403, template: 'A request authenticated by a session cookie must carry the session\'s X-CSRF-Token header.' },
  cors_origin_not_allowed: { code: 'forbidden', status: 403, template: 'Origin {origin} may not call this API from a browser (FLEETGW_CORS_ORIGINS lists the origins that may).' },
  session_required: { code: 'forbidden', status: 403, template: 'This endpoint accepts only a user session, not an API key.' },
  role_lacks_permission: { code: 'forbidden', status: 403, template: 'Role {role} does not grant {permission}; a key cannot carry more than its creator\'s role.' },
  api_key_not_yours: { code: 'forbidden', status: 403, template: 'Only the creator of API key {apiKeyId} or an admin can revoke it.' },
  api_key_not_found: { code: 'not_found', status: 404, template: 'API key {apiKeyId} was not found.' },
  org_admin_required: { code: 'forbidden', status: 403, template: 'Only an organization admin may do this: a user with role admin, or an organization-wide API key with fleet:write.' },
  webhook_not_found: { code: 'not_found', status: 404, template: 'Webhook {webhookId} was not found.' },
  admin_required: { code: 'forbidden', status: 403, template: 'Only a user with the admin role can {action}.' },
  user_not_found: { code: 'not_found', status: 404, template: 'User {userId} was not found.' },
  user_exists: { code: 'conflict', status: 409, template: 'A user with email {email} already exists.' },
  floor_plan_not_found: { code: 'not_found', status: 404, template: 'Fleet {fleetId} has no floor plan.' },
  floor_plan_not_image: { code: 'bad_request', status: 415, template: 'The floor plan is not a {contentType} image (checked by its bytes).' },
  floor_plan_too_large: { code: 'bad_request', status: 413, template: 'The floor plan image exceeds {limit} bytes.' },
  floor_plan_placement_degenerate: { code: 'bad_request', status: 400, template: 'Invalid placement: {detail}.' },
  user_not_self: { code: 'conflict', status: 409, template: 'An admin cannot disable their own account (another admin can).' },
  // Faults and utilization.
  fault_not_found: { code: 'not_found', status: 404, template: 'Fault {faultId} was not found.' },
  telemetry_reads_unavailable: { code: 'unavailable', status: 503, template: 'The telemetry store cannot answer reads right now; retry later.' },
  // Live telemetry stream.
  stream_tickets_exhausted: { code: 'rate_limited', status: 429, template: 'Too many outstanding stream tickets: the {bound} bound of {max} is reached; retry after {retryAfterS} s.' },
  // The Agent API over MCP (docs/mcp.md).
  mcp_session_required: { code: 'bad_request', status: 400, template: 'An MCP request other than initialize needs the Mcp-Session-Id header of a session.' },
  mcp_session_not_found: { code: 'not_found', status: 404, template: 'The MCP session named by Mcp-Session-Id was not found (closed, closed while idle to make room, expired after {timeoutS} s without a request other than ping, or started by another credential); initialize a new one.' },
  mcp_session_quota: { code: 'rate_limited', status: 429, template: 'The {bound} bound of {max} MCP sessions is reached and none of them is idle; retry after {retryAfterS} s or close unused ones (DELETE /v1/mcp).' },
  mcp_sessions_full: { code: 'unavailable', status: 503, template: 'The gateway holds its maximum of {max} MCP sessions and none of them is idle; retry after {retryAfterS} s or close unused ones (DELETE /v1/mcp).' },
  mcp_transport: { code: 'bad_request', status: 400, template: 'MCP transport: {detail}.' },
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
