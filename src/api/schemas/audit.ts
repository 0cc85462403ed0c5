/**
 * Command audit (`GET /v1/audit-log`, `fleet:read`) and one command's later states
 * (`GET /v1/robot-commands/{command_id}`, `robots:read`).
 */
import { Type, type Static } from '@sinclair/typebox';
import { COMMAND_ACTIONS } from '../../commands/catalog/index.js';
import { FreeForm, Nullable, Uuid } from './common.js';
import { DeliveryObject } from './control-robot.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';

export const AUDIT_LIMIT: ListLimit = { default: 100, max: 500 };

const StoredState = named('StoredDeliveryState', Type.Unsafe<'deferred' | 'dispatched' | 'agent_received' | 'agent_rejected'>({
  type: 'string',
  enum: ['deferred', 'dispatched', 'agent_received', 'agent_rejected'],
  description: 'A delivery state as stored (`timed_out` is an observation of a wait, never stored).',
}));

const TimeMs = Type.Integer({ minimum: 0, description: 'Milliseconds since the Unix epoch.' });

const actor = <K extends string, P extends Record<string, typeof Uuid>>(kind: K, ids: P, description: string) =>
  Type.Object({ actorType: Type.Literal(kind), ...ids }, { additionalProperties: false, description });

/**
 * Who asked for a command, one shape per kind of actor: the audit log and the command read share it
 * (docs/commands.md, "Who asked").
 */
export const RequestedBy = named('RequestedBy', Type.Union([
  actor('api_key', { apiKeyId: Uuid }, 'An API key.'),
  actor('user', { userId: Uuid }, 'A user, through a session of the web console.'),
  actor('operation', { operationId: Uuid }, 'The fleet operation (control-operation start, pause or abort_missions acting on its runs).'),
  actor('schedule', { scheduleId: Uuid }, 'A fire of a mission or command schedule (its MissionStart, a scheduled command, the abort of a run never acknowledged).'),
  Type.Object({ actorType: Type.Literal('system') }, { additionalProperties: false, description: 'The gateway itself: a command of an operation that no longer exists.' }),
], { description: 'Told apart by `actorType`.' }));

export const AuditEntry = named('AuditEntry', Type.Object(
  {
    commandId: Uuid,
    robotId: Uuid,
    fleetId: Uuid,
    action: Type.String({ description: `${COMMAND_ACTIONS.map((a) => `\`${a}\``).join(', ')}.` }),
    argsDigest: Type.String({ description: 'SHA-256 (hex) of the canonical JSON (keys sorted) of the command arguments.' }),
    requestedBy: RequestedBy,
    createdAtMs: TimeMs,
    state: StoredState,
    retryBudgetExhausted: Type.Boolean(),
    rejectReason: Nullable(Type.String({ description: 'The agent\'s reason with `agent_rejected`.' })),
    ackSource: Nullable(
      Type.Unsafe<'agent' | 'hello'>({
        type: 'string',
        enum: ['agent', 'hello'],
        description:
          'With an acknowledged state: `agent`, the robot agent acknowledged the command; `hello`, no ack was recorded and the ' +
          'robot, reconnecting, reported a higher last applied seq, so the command is settled as received without being resent ' +
          '(the agent may have refused it; see docs/commands.md, Delivery). null while not acknowledged.',
      }),
    ),
    attempts: Type.Integer({ description: 'Times the command was written to the robot\'s stream.' }),
    history: Type.Array(Type.Object({ state: StoredState, atMs: TimeMs }, { additionalProperties: false }), {
      description: 'Every delivery state change with its time, oldest first.',
    }),
    resultAtMs: Nullable(TimeMs),
    linkConflict: Type.Optional(
      Type.Literal(true, { description: 'Present when the command was sent while the robot had a link conflict: its ack came from one of two processes using the robot\'s credentials (docs/robot-link.md).' }),
    ),
  },
  { additionalProperties: false, description: 'One command as the audit log shows it (arguments only as their digest).' },
));
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditLogQuery = Type.Object(
  {
    fleet_id: Uuid,
    robot_id: Type.Optional(Uuid),
    from_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'Only commands created at or after this time.' })),
    to_ms: Type.Optional(Type.Integer({ minimum: 0, description: 'Only commands created before this time.' })),
    limit: Type.Optional(LimitParam(AUDIT_LIMIT)),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);
export type AuditLogQuery = Static<typeof AuditLogQuery>;

export const AuditLogResponse = Page('AuditLogPage', AuditEntry, 'Newest first.');
export type AuditLogResponse = Static<typeof AuditLogResponse>;

export const CommandPathParams = Type.Object({ command_id: Uuid }, { additionalProperties: false });
export type CommandPathParams = Static<typeof CommandPathParams>;

export const CommandView = named('Command', Type.Object(
  {
    ...AuditEntry.properties,
    args: Nullable(FreeForm({
      description: 'The command arguments as sent, for keys holding robots:write (who may send them); null for read-only keys, which see `argsDigest` only (arguments can carry configuration values).',
    })),
    delivery: DeliveryObject,
    result: Nullable(
      named('CommandResult', Type.Object(
        {
          success: Type.Boolean(),
          error: Type.String({ description: 'The robot\'s reason when `success` is false.' }),
          values: Nullable(FreeForm({ description: 'The configuration or settings the robot reported.' })),
          atMs: TimeMs,
        },
        { additionalProperties: false, description: 'config / onboard_settings: what the robot reported (null until it did).' },
      )),
    ),
  },
  { additionalProperties: false, description: 'A command\'s current state; `timed_out` is never stored, so `delivery.state` is a stored state.' },
));
export type CommandView = Static<typeof CommandView>;
