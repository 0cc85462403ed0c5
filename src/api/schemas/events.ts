/**
 * `GET /v1/events` (spec: Schedules and runs (read); Events). The spec leaves the response open; this
 * is the gateway's shape: one correlation's events in append order, keyset-paged by `seq`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { FreeForm, Nullable, Uuid } from './common.js';
import { named } from './named.js';

export const EventsQuery = Type.Object(
  {
    fleet_id: Uuid,
    correlation_id: Uuid,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size; default 500, at most 1000.' })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,16}$', description: 'The previous page\'s `next_cursor`.' })),
  },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;

export const EventView = named('Event', Type.Object(
  {
    eventId: Uuid,
    seq: Type.Integer({ description: 'Global append order: strictly increasing along a timeline, also across restarts.' }),
    atMs: Type.Integer({ description: 'When it happened (Unix ms).' }),
    kind: Type.String({ description: 'e.g. `template.created`, `operation.paused`, `schedule.accepted`, `run.completed`, `robot.link_conflict`, `robot.link_conflict_cleared`.' }),
    subject: Type.Object(
      {
        type: Type.Unsafe<'schedule' | 'run' | 'operation' | 'template' | 'feature' | 'command' | 'robot' | 'api_key' | 'user'>({
          type: 'string',
          enum: ['schedule', 'run', 'operation', 'template', 'feature', 'command', 'robot', 'api_key', 'user'],
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

export const EventsResponse = named('EventPage', Type.Object(
  {
    items: Type.Array(EventView),
    next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
  },
  { additionalProperties: false },
));
export type EventsResponse = Static<typeof EventsResponse>;
