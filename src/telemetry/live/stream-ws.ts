/**
 * The `/v1/telemetry/stream` WebSocket route on the gateway's uWS app (registered through the HTTP
 * server's `configure(app)` hook). Authentication is the single-use ticket only: as subprotocol
 * `fleetgw.ticket.<ticket>` (redeemed at the upgrade) or in the subscribe message. Tickets never travel
 * in the URL.
 */
import type * as uws from '../../http/uws.js';
import type { StreamHub, StreamSession } from './stream-hub.js';
import { MAX_CLIENT_FRAME_BYTES, STREAM_PATH, STREAM_SUBPROTOCOL, TICKET_SUBPROTOCOL_PREFIX } from './stream-protocol.js';
import type { TicketScope } from './ticket-issuer.js';

interface SocketData {
  scope: TicketScope | null;
  ticketRejected: boolean;
  session: StreamSession | null;
}

/** Picks the ticket out of `Sec-WebSocket-Protocol` and the protocol to answer with. */
function readProtocols(header: string): { ticket: string | null; selected: string } {
  let ticket: string | null = null;
  let offeredV1 = false;
  let ticketProtocol = '';
  for (const raw of header.split(',')) {
    const p = raw.trim();
    if (p === STREAM_SUBPROTOCOL) offeredV1 = true;
    else if (p.startsWith(TICKET_SUBPROTOCOL_PREFIX) && ticket === null) {
      ticket = p.slice(TICKET_SUBPROTOCOL_PREFIX.length);
      ticketProtocol = p;
    }
  }
  // RFC 6455 clients (e.g. `ws`) fail the handshake when they offered protocols and none is selected,
  // so answer with fleetgw.v1 when offered, else echo the ticket protocol back to its own sender.
  return { ticket, selected: offeredV1 ? STREAM_SUBPROTOCOL : ticketProtocol };
}

/**
 * Adds the telemetry WebSocket route to `app`. Samples go out through uWS topics (`app.publish`: one
 * native call per message per topic, whatever the number of sockets); the hub subscribes a socket to
 * its topics only after its ticket was redeemed and its subscribe accepted.
 */
export function registerTelemetryStream(app: uws.TemplatedApp, hub: StreamHub): void {
  hub.useTopics({
    publish: (topic, message, binary) => {
      app.publish(topic, message, binary);
    },
  });
  app.ws<SocketData>(STREAM_PATH, {
    // Above our own cap so a too-large message gets a 4400 with a reason (uWS would just drop the socket).
    maxPayloadLength: MAX_CLIENT_FRAME_BYTES,
    // Our own per-socket bound (hub.maxBufferedBytes) drops samples first; uWS's limit is only a backstop.
    maxBackpressure: hub.maxBufferedBytes * 4,
    closeOnBackpressureLimit: false,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      const key = req.getHeader('sec-websocket-key');
      const extensions = req.getHeader('sec-websocket-extensions');
      const { ticket, selected } = readProtocols(req.getHeader('sec-websocket-protocol'));
      let scope: TicketScope | null = null;
      if (ticket !== null) scope = hub.tickets.redeem(ticket);
      const data: SocketData = { scope, ticketRejected: ticket !== null && scope === null, session: null };
      res.upgrade(data, key, selected, extensions, context);
    },
    open: (ws) => {
      const data = ws.getUserData();
      data.session = hub.connect(
        {
          send: (msg, binary) => {
            ws.send(msg, binary === true);
          },
          bufferedAmount: () => ws.getBufferedAmount(),
          cork: (fn) => {
            ws.cork(fn);
          },
          end: (code, reason) => ws.end(code, reason),
          subscribe: (topic) => {
            ws.subscribe(topic);
          },
          unsubscribe: (topic) => {
            ws.unsubscribe(topic);
          },
        },
        data.scope,
        data.ticketRejected,
      );
    },
    message: (ws, message) => ws.getUserData().session?.onMessage(message),
    drain: (ws) => ws.getUserData().session?.onDrain(),
    close: (ws) => {
      const data = ws.getUserData();
      data.session?.onClose();
      data.session = null;
    },
  });
}
