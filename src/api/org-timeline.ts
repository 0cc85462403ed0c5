/**
 * Events about organization-level things (API keys, users' logins) on the fleet timelines of
 * `GET /v1/events`: the event log is keyed by fleet, so such an event goes to every fleet it concerns
 * (a fleet-bound key's fleet; otherwise every fleet of the organization), under one correlation id
 * (the key's or the user's id). Never carries a secret.
 */
import type { EventLog } from '../events/index.js';
import type { EventRecord } from '../events/record.js';
import { listFleets } from '../store/identity.js';
import type { Store } from '../store/lmdb.js';

export interface OrgEvent {
  orgId: string;
  /** The one fleet concerned, or null for every fleet of the organization. */
  fleetId: string | null;
  correlationId: string;
  kind: string;
  subject: EventRecord['subject'];
  atMs: number;
  data: Record<string, unknown>;
}

/** Appends `e` to each fleet timeline it concerns; returns how many. */
export function appendOrgEvent(events: EventLog, store: Store, e: OrgEvent): number {
  const fleets = e.fleetId !== null ? [e.fleetId] : listFleets(store, e.orgId).map((f) => f.fleetId);
  for (const fleetId of fleets) {
    events.append({ fleetId, correlationId: e.correlationId, atMs: e.atMs, kind: e.kind, subject: e.subject, data: e.data });
  }
  return fleets.length;
}
