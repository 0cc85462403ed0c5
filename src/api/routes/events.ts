/** `GET /v1/events`: one correlation's timeline in a fleet (spec: Events, rule 1). */
import { requireFleet } from '../../auth/access.js';
import type { EventLog } from '../../events/index.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import type { Store } from '../../store/lmdb.js';
import { EventsQuery, EventsResponse } from '../schemas/events.js';

const DEFAULT_LIMIT = 500;

/** The events read route. */
export function eventRoutes(deps: { store: Store; events: EventLog }): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/events',
      operationId: 'listEvents',
      summary: 'The correlated event timeline of a fleet (e.g. a schedule, run, template or the operation), oldest first.',
      tags: ['Events'],
      auth: 'fleet:read',
      query: EventsQuery,
      responses: { 200: { description: 'Events in append order.', schema: EventsResponse } },
      errors: ['fleet_not_found', 'forbidden_fleet'],
    }).handle(
      ({ auth, query }) => {
        const fleet = requireFleet(deps.store, auth, query.fleet_id);
        const limit = query.limit ?? DEFAULT_LIMIT;
        const after = query.cursor === undefined ? undefined : Number(query.cursor);
        // One extra row tells whether another page exists without a second read.
        const rows = deps.events.readTimeline(fleet.fleetId, query.correlation_id, { limit: limit + 1, ...(after !== undefined ? { after } : {}) });
        const page = rows.slice(0, limit);
        const last = page[page.length - 1];
        const body: EventsResponse = {
          items: page.map((e) => ({ eventId: e.eventId, seq: e.seq, atMs: e.atMs, kind: e.kind, subject: e.subject, data: e.data })),
          next_cursor: rows.length > limit && last !== undefined ? String(last.seq) : null,
        };
        return { status: 200, body };
      },
    ),
  ];
}
