/** POST /v1/telemetry/stream-tickets (docs/telemetry-stream.md). */
import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';
import { named } from './named.js';

export const StreamTicketRequest = named('StreamTicketRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
  },
  { additionalProperties: false },
));
export type StreamTicketRequest = Static<typeof StreamTicketRequest>;

export const StreamTicketResponse = named('StreamTicket', Type.Object(
  {
    ticket: Type.String({
      description:
        'Single-use secret (256 random bits, base64url). Present it in the subscribe message or as subprotocol `fleetgw.ticket.<ticket>`, never in a URL. ' +
        'Refused (close 4401) once the API key that asked for it is revoked or expired; a stream opened with it closes with 4403 within 1 s when that happens (docs/telemetry-stream.md).',
    }),
    url: Type.String({ description: 'WebSocket URL of the telemetry stream (wss:// when the gateway serves TLS). Contains no secret.' }),
    expiresAtMs: Type.Integer({ description: 'Unix ms after which the ticket is refused (at most 60 s after issue).' }),
  },
  { additionalProperties: false },
));
export type StreamTicketResponse = Static<typeof StreamTicketResponse>;
