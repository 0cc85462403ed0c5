/**
 * Alerts (docs/alerts.md): `GET /v1/orgs/{org_id}/fleets/{fleet_id}/alerts` (`fleet:read`), one alert,
 * and `POST …/alerts/{alert_id}/acknowledge` (`fleet:write`). The interface leaves the shape open
 * ("not shown"); this is the gateway's.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ALERT_KINDS, ALERT_RESOLUTIONS, ALERT_SEVERITIES, ALERT_STATES } from '../../fleet/safety/alerts/records.js';
import { FreeForm, Nullable, Uuid } from './common.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';

export const ALERTS_LIMIT: ListLimit = { default: 100, max: 500 };

const enumOf = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description });

export const AlertKindSchema = named('AlertKind', enumOf(ALERT_KINDS,
  'The condition: `fault` (a robot fault at error severity or worse), `estop` (emergency stop pressed), `robot_offline` (an active robot offline longer than the threshold), `battery_low` (below the threshold), `schedule_failed`, `command_retry_exhausted`, `link_conflict` (two processes use one robot\'s credentials). docs/alerts.md.'));
export const AlertStateSchema = named('AlertState', enumOf(ALERT_STATES,
  '`open` until a person acknowledges it (`acknowledged`); `resolved` once its condition cleared (from either state).'));

export const AlertsPathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid }, { additionalProperties: false });
export type AlertsPathParams = Static<typeof AlertsPathParams>;

export const AlertPathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid, alert_id: Uuid }, { additionalProperties: false });
export type AlertPathParams = Static<typeof AlertPathParams>;

export const AlertListQuery = Type.Object(
  {
    state: Type.Optional(AlertStateSchema),
    kind: Type.Optional(AlertKindSchema),
    robot_id: Type.Optional(Uuid),
    unresolved_from_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Only alerts not yet resolved at this time (Unix ms): resolved after it, or unresolved now. With `unresolved_to_ms`, the alerts unresolved at some moment of the window (time travel).' })),
    unresolved_to_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Only alerts opened at or before this time (Unix ms); at or after `unresolved_from_ms`.' })),
    limit: Type.Optional(LimitParam(ALERTS_LIMIT)),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);
export type AlertListQuery = Static<typeof AlertListQuery>;

const AlertActorSchema = named('AlertActor', Type.Object(
  {
    actorType: enumOf(['api_key', 'user'] as const, '`user`: a person logged in with a session; `api_key`: an automation.'),
    apiKeyId: Type.String({ description: 'The credential: the API key id, or the session id of a person.' }),
    userId: Nullable(Uuid),
    email: Nullable(Type.String()),
  },
  { additionalProperties: false },
));

export const AlertView = named('Alert', Type.Object(
  {
    alertId: Uuid,
    fleetId: Uuid,
    kind: AlertKindSchema,
    state: AlertStateSchema,
    severity: enumOf(ALERT_SEVERITIES, '`critical` (e-stop, link conflict, critical faults), `error` (error faults), `warning` (the rest).'),
    subject: Type.Object(
      {
        type: enumOf(['robot', 'schedule', 'command'] as const, 'What the alert is about.'),
        id: Uuid,
      },
      { additionalProperties: false },
    ),
    robotId: Nullable(Uuid),
    message: Type.String({ description: 'One line for people, from the latest occurrence.' }),
    details: FreeForm({ description: 'Kind-specific facts of the latest occurrence (docs/alerts.md, Kinds).' }),
    occurrences: Type.Integer({ minimum: 1, description: 'Times the condition was raised while this alert was unresolved: a repeat never opens a second alert.' }),
    openedAtMs: Type.Integer(),
    lastRaisedAtMs: Type.Integer(),
    acknowledgedAtMs: Nullable(Type.Integer()),
    acknowledgedBy: Nullable(AlertActorSchema),
    acknowledgeNote: Nullable(Type.String()),
    resolvedAtMs: Nullable(Type.Integer()),
    resolution: Nullable(enumOf(ALERT_RESOLUTIONS,
      '`condition_cleared`; `cleared_while_down` (found cleared when the gateway started); `robot_inactive` (an offline robot was made inactive); `subject_removed` (the robot, schedule or command no longer exists).')),
    correlationId: Uuid,
    updatedAtMs: Type.Integer(),
  },
  { additionalProperties: false, description: 'A fleet condition that needs a person. Its events (`alert.opened`, `alert.acknowledged`, `alert.resolved`) are on the timeline `GET /v1/events?correlation_id=<correlationId>`.' },
));
export type AlertView = Static<typeof AlertView>;

export const AlertListResponse = Page('AlertPage', AlertView, 'Newest first (by the time each alert opened).');
export type AlertListResponse = Static<typeof AlertListResponse>;

export const AcknowledgeAlertBody = named('AcknowledgeAlertRequest', Type.Object(
  { note: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'What the person did or will do.' })) },
  { additionalProperties: false },
));
export type AcknowledgeAlertBody = Static<typeof AcknowledgeAlertBody>;
