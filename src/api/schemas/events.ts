/**
 * `GET /v1/events` (spec: Schedules and runs (read); Events). The spec leaves the response open; this
 * is the gateway's shape: one correlation's events in append order, `{items, next_cursor}` keyset
 * pages (src/api/list-reader.ts).
 */
import { Type, type Static } from '@sinclair/typebox';
import { FreeForm, Uuid } from './common.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';

export const EVENTS_LIMIT: ListLimit = { default: 500, max: 1000 };

export const EventsQuery = Type.Object(
  {
    fleet_id: Uuid,
    // A correlation id (a schedule's `correlationId`, a template, feature, operation or robot id) or a
    // schedule id, which reads that schedule's timeline (the route's summary says so).
    correlation_id: Uuid,
    limit: Type.Optional(LimitParam(EVENTS_LIMIT)),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;

export const EventView = named('Event', Type.Object(
  {
    eventId: Uuid,
    seq: Type.Integer({ description: 'Global append order: strictly increasing along a timeline, also across restarts.' }),
    atMs: Type.Integer({ description: 'When it happened (Unix ms).' }),
    kind: Type.String({ description: 'e.g. `template.created`, `operation.paused`, `schedule.accepted`, `run.completed`, `robot.link_conflict`, `robot.link_conflict_cleared`, `alert.opened`, `alert.acknowledged`, `alert.resolved`, `robot.updated`, `robot.transferred_out` / `robot.transferred_in` (docs/robot-admin.md), `object.detected`, `object.expired` (docs/objects.md).' }),
    subject: Type.Object(
      {
        type: Type.Unsafe<'schedule' | 'run' | 'operation' | 'template' | 'feature' | 'command' | 'robot' | 'api_key' | 'user' | 'field_rule' | 'object' | 'alert'>({
          type: 'string',
          enum: ['schedule', 'run', 'operation', 'template', 'feature', 'command', 'robot', 'api_key', 'user', 'field_rule', 'object', 'alert'],
          description: '`robot`: the robot\'s link timeline (correlation id = robot id), e.g. `robot.link_conflict`. `api_key` (correlation id = key id) and `user` (correlation id = user id): key management and logins, on the timeline of every fleet the key or user can reach (docs/sessions.md).',
        }),
        id: Type.String(),
      },
      { additionalProperties: false },
    ),
    data: FreeForm({ description: 'Kind-specific fields (docs/missions.md lists them; robot link events: docs/robot-link.md).' }),
  },
  { additionalProperties: false },
));
export type EventView = Static<typeof EventView>;

export const EventsResponse = Page('EventPage', EventView, 'Oldest first (append order).');
export type EventsResponse = Static<typeof EventsResponse>;
