/**
 * POST /v1/telemetry/stream-tickets: a single-use ticket for the live telemetry WebSocket, so browser
 * dashboards never hold an API key (docs/telemetry-stream.md).
 */
import { requireFleet, requireOrg } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { TicketCapacityError, type TicketBound, type TicketIssuer } from '../../telemetry/live/index.js';
import { StreamTicketRequest, StreamTicketResponse } from '../schemas/stream-tickets.js';
import { SMALL_BODY_MAX_BYTES } from '../schemas/control-robot.js';

export interface StreamTicketDeps {
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  tickets: TicketIssuer;
  /**
   * The stream's public URL, e.g. `wss://gw.example:8443/v1/telemetry/stream` (ws:// for plain HTTP).
   * A function because the port is known only once the server listens.
   */
  streamUrl: () => string;
}

const BOUND_NAMES: Record<TicketBound, string> = { api_key: 'per-API-key', organization: 'per-organization', gateway: 'gateway-wide' };

/** The stream-ticket route. */
export function streamTicketRoutes(deps: StreamTicketDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/telemetry/stream-tickets',
      operationId: 'createTelemetryStreamTicket',
      summary: 'Mint a single-use, fleet-scoped ticket (valid for at most 60 s) to open the live telemetry WebSocket.',
      tags: ['Telemetry'],
      auth: 'robots:read',
      body: StreamTicketRequest,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      errors: ['stream_tickets_exhausted', 'fleet_not_found', 'forbidden_org', 'forbidden_fleet'],
      responses: { 201: { description: 'The ticket and where to use it.', schema: StreamTicketResponse } },
    }).handle(
      ({ auth, body }) => {
        requireOrg(auth, body.org_id);
        requireFleet(deps.identity, auth, body.fleet_id);
        try {
          const issued = deps.tickets.issue({
            orgId: auth.orgId,
            fleetId: body.fleet_id,
            apiKeyId: auth.apiKeyId,
            // The stream carries alerts only to those who may read them (docs/telemetry-stream.md, alert messages).
            alerts: auth.permissions.includes('fleet:read'),
          });
          const out: StreamTicketResponse = { ticket: issued.ticket, url: deps.streamUrl(), expiresAtMs: issued.expiresAtMs };
          return { status: 201, body: out, headers: { 'cache-control': 'no-store' } };
        } catch (e) {
          if (e instanceof TicketCapacityError) {
            const { bound, max, retryAfterS } = e;
            throw apiError('stream_tickets_exhausted', { bound: BOUND_NAMES[bound], max, retryAfterS }, {
              headers: { 'retry-after': String(retryAfterS) },
              details: { bound, max, retryAfterS },
            });
          }
          throw e;
        }
      },
    ),
  ];
}
