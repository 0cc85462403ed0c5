/**
 * Reading commands back: `GET /v1/audit-log` (every command of a fleet, filterable by robot and
 * time, cursor-paged, newest first) and `GET /v1/robot-commands/{command_id}` (one command's later
 * states, e.g. after an ack wait timed out, and a request/response command's result).
 */
import { requesterOnRead, type RequesterLookups } from '../../commands/requester.js';
import type { CommandService } from '../../commands/service.js';
import { getOperation } from '../../missions/catalog/operation.js';
import { deliveryOf, isAcknowledged, type CommandRecord } from '../../commands/types.js';
import { apiError } from '../../errors/catalog.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { publicDelivery } from '../command-dispatch.js';
import { defineList } from '../list-reader.js';
import {
  AUDIT_LIMIT,
  AuditLogQuery,
  AuditLogResponse,
  CommandPathParams,
  CommandView,
  type AuditEntry,
} from '../schemas/audit.js';
import { sessionRecord } from '../../auth/users/sessions.js';

export interface CommandReadDeps {
  store: Store;
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  commands: CommandService;
}

/**
 * The audit view of a command record (arguments only as their digest).
 * @param lookups what reading a record of an earlier version in the current shape needs
 */
export function auditEntryOf(rec: CommandRecord, lookups: RequesterLookups): AuditEntry {
  const entry: AuditEntry = {
    commandId: rec.commandId,
    robotId: rec.robotId,
    fleetId: rec.fleetId,
    action: rec.action,
    argsDigest: rec.argsDigest,
    requestedBy: requesterOnRead(rec.requestedBy, rec.fleetId, lookups),
    createdAtMs: rec.createdAtMs,
    state: rec.state,
    retryBudgetExhausted: rec.retryBudgetExhausted,
    rejectReason: rec.rejectReason,
    ackSource: isAcknowledged(rec.state) ? (rec.ackSource ?? 'agent') : null,
    attempts: rec.attempts,
    history: rec.history.map((h) => ({ state: h.state, atMs: h.atMs })),
    resultAtMs: rec.result?.atMs ?? null,
  };
  if (rec.linkConflict === true) entry.linkConflict = true;
  return entry;
}

/** The audit and command read routes. */
export function commandReadRoutes(deps: CommandReadDeps): RouteDef[] {
  const { store, identity, commands } = deps;
  const lookups: RequesterLookups = {
    operationIdOf: (fleetId) => getOperation(store, fleetId)?.operationId,
    userOfSession: (sessionId) => sessionRecord(store, sessionId)?.userId,
  };
  const auditLog = defineList<AuditLogQuery, CommandRecord, AuditEntry>({
    kind: 'audit-log',
    limit: AUDIT_LIMIT,
    filters: (q) => ({ robot_id: q.robot_id, from_ms: q.from_ms, to_ms: q.to_ms }),
    source: (fleet, q) => commands.audit.entries({
      fleetId: fleet.fleetId,
      ...(q.robot_id !== undefined ? { robotId: q.robot_id } : {}),
      ...(q.from_ms !== undefined ? { fromMs: q.from_ms } : {}),
      ...(q.to_ms !== undefined ? { toMs: q.to_ms } : {}),
    }, (id) => commands.get(id)),
    view: (rec) => auditEntryOf(rec, lookups),
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/audit-log',
      operationId: 'getAuditLog',
      summary:
        'Command audit entries of a fleet, newest first: who asked (`requestedBy`: an API key, a user, the operation or a schedule), robot, action, SHA-256 of the arguments, every ' +
        'delivery state change with its time. Filter by robot_id and time (from_ms, to_ms); page with limit and next_cursor.',
      tags: ['Audit'],
      auth: 'fleet:read',
      query: AuditLogQuery,
      responses: { 200: { description: 'One page of entries.', schema: AuditLogResponse } },
      errors: ['fleet_not_found', 'forbidden_fleet', 'cursor_invalid'],
    }).handle(({ auth, query }) => ({ status: 200, body: auditLog.read(identity, auth, query) })),
    defineRoute({
      method: 'GET',
      path: '/v1/robot-commands/{command_id}',
      operationId: 'getRobotCommand',
      summary: "A command's current delivery state, history, arguments and (config / onboard settings) the robot's result.",
      tags: ['Robot commands'],
      auth: 'robots:read',
      params: CommandPathParams,
      responses: { 200: { description: 'The command.', schema: CommandView } },
      errors: ['command_not_found'],
    }).handle(
      ({ auth, params }) => {
        const rec = commands.get(params.command_id);
        // Another organization's or fleet's command is not visible: 404, so ids cannot be probed.
        if (!rec || rec.orgId !== auth.orgId || (auth.fleetId !== null && auth.fleetId !== rec.fleetId)) {
          throw apiError('command_not_found', { commandId: params.command_id });
        }
        const r = rec.result;
        const body: CommandView = {
          ...auditEntryOf(rec, lookups),
          // Arguments can hold configuration values: shown to keys that may send commands, digest only otherwise.
          args: auth.permissions.includes('robots:write') ? rec.args : null,
          delivery: publicDelivery(deliveryOf(rec)),
          result: r ? { success: r.success, error: r.error, values: r.payload, atMs: r.atMs } : null,
        };
        return { status: 200, body };
      },
    ),
  ];
}
