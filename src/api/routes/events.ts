/** `GET /v1/events`: one correlation's timeline in a fleet (spec: Events, rule 1). */
import type { EventLog } from '../../events/index.js';
import type { EventRecord } from '../../events/record.js';
import { scheduleCorrelationId } from '../../missions/scheduling/schedules.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { defineRoute } from '../define-route.js';
import { defineList } from '../list-reader.js';
import type { RouteDef } from '../route.js';
import { EVENTS_LIMIT, EventsQuery, EventsResponse, type EventView } from '../schemas/events.js';

function eventView(e: EventRecord): EventView {
  return { eventId: e.eventId, seq: e.seq, atMs: e.atMs, kind: e.kind, subject: e.subject, data: e.data };
}

/** The events read route. */
export function eventRoutes(deps: { store: Store; identity: IdentityReads; events: EventLog }): RouteDef[] {
  const list = defineList<EventsQuery, EventRecord, EventView>({
    kind: 'events',
    limit: EVENTS_LIMIT,
    filters: (q) => ({ correlation_id: q.correlation_id }),
    // A schedule id reads the schedule's timeline (spec: events follow a schedule's outcome).
    source: (fleet, q) => deps.events.timeline(fleet.fleetId, scheduleCorrelationId(deps.store, fleet.fleetId, q.correlation_id) ?? q.correlation_id),
    view: eventView,
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/events',
      operationId: 'listEvents',
      summary: 'The correlated event timeline of a fleet (`correlation_id`: a schedule\'s id or correlation id, a template, feature, operation or robot id), oldest first.',
      tags: ['Events'],
      auth: 'fleet:read',
      query: EventsQuery,
      responses: { 200: { description: 'Events in append order.', schema: EventsResponse } },
      errors: ['fleet_not_found', 'forbidden_fleet', 'cursor_invalid'],
    }).handle(({ auth, query }) => ({ status: 200, body: list.read(deps.identity, auth, query) })),
  ];
}
