/**
 * The `/v1/telemetry/foxglove` WebSocket route on the gateway's uWS app: the Foxglove WebSocket
 * protocol (foxglove-hub.ts, docs/foxglove.md).
 *
 * The ticket comes in the URL (`?ticket=...`): Foxglove and the tools built on @foxglove/ws-protocol
 * take only a URL and offer only their own subprotocol, so neither a header nor a subprotocol can
 * carry it. It is the one secret the gateway accepts in a URL, because it is single-use (redeemed
 * here, at the upgrade, before any byte of the stream), expires 30 s after issue, acts only for the
 * one fleet it names, and is never logged: this route logs nothing of the request, and the access log
 * sees only the router's requests, never a WebSocket upgrade, and never a query string anyway
 * (src/http/access-log.ts). A refused upgrade is an HTTP error response; no socket is opened.
 */
import type * as uws from '../../http/uws.js';
import { apiError, type ApiError } from '../../errors/catalog.js';
import type { FoxgloveHub, FoxgloveSession } from './foxglove-hub.js';
import { FOXGLOVE_PATH, FOXGLOVE_SUBPROTOCOL, MAX_FOXGLOVE_CLIENT_MESSAGE_BYTES } from './foxglove-protocol.js';
import type { TicketIssuer, TicketScope } from '../live/index.js';

interface SocketData {
  scope: TicketScope;
  session: FoxgloveSession | null;
}

export interface FoxgloveRouteOptions {
  foxglove: FoxgloveHub;
  tickets: TicketIssuer;
  /** Per-socket send buffer bound (uWS's backstop is four times it). */
  maxBufferedBytes: number;
}

// The refusals never vary, so they are built once; neither names the ticket.
const NO_SUBPROTOCOL = apiError('invalid_header', { header: 'Sec-WebSocket-Protocol', detail: `offer the subprotocol ${FOXGLOVE_SUBPROTOCOL}` });
const BAD_TICKET = apiError('unauthorized');
const STATUS_TEXT: Readonly<Record<number, string>> = { 400: '400 Bad Request', 401: '401 Unauthorized' };

/** The ticket from a raw query string (`ticket=...`, first one wins); null when absent. */
export function ticketFromQuery(query: string): string | null {
  for (const part of query.split('&')) {
    if (part.startsWith('ticket=')) {
      // base64url needs no decoding; anything percent-encoded is not one of ours and fails redemption.
      const t = part.slice('ticket='.length);
      return t.length > 0 ? t : null;
    }
  }
  return null;
}

function refuse(res: uws.HttpResponse, err: ApiError): void {
  res.cork(() => {
    res.writeStatus(STATUS_TEXT[err.status] ?? String(err.status)).writeHeader('content-type', 'application/json').writeHeader('cache-control', 'no-store').end(JSON.stringify(err.toBody()));
  });
}

/** Adds the Foxglove WebSocket route to `app`. */
export function registerFoxgloveEndpoint(app: uws.TemplatedApp, opts: FoxgloveRouteOptions): void {
  const { foxglove, tickets } = opts;
  app.ws<SocketData>(FOXGLOVE_PATH, {
    maxPayloadLength: MAX_FOXGLOVE_CLIENT_MESSAGE_BYTES * 2,
    maxBackpressure: opts.maxBufferedBytes * 4,
    closeOnBackpressureLimit: false,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => {
      const offered = req.getHeader('sec-websocket-protocol').split(',').some((p) => p.trim() === FOXGLOVE_SUBPROTOCOL);
      const ticket = ticketFromQuery(req.getQuery() ?? '');
      const key = req.getHeader('sec-websocket-key');
      const extensions = req.getHeader('sec-websocket-extensions');
      if (!offered) return refuse(res, NO_SUBPROTOCOL);
      // Redeemed before the handshake completes: a used, expired or revoked ticket never opens a socket.
      const scope = ticket === null ? null : tickets.redeem(ticket);
      if (scope === null) return refuse(res, BAD_TICKET);
      res.upgrade<SocketData>({ scope, session: null }, key, FOXGLOVE_SUBPROTOCOL, extensions, context);
    },
    open: (ws) => {
      const data = ws.getUserData();
      data.session = foxglove.connect(
        {
          send: (msg) => {
            // Control messages are JSON text; data frames binary (the protocol's MESSAGE_DATA).
            ws.send(msg, typeof msg !== 'string');
          },
          bufferedAmount: () => ws.getBufferedAmount(),
          cork: (fn) => {
            ws.cork(fn);
          },
          end: (code, reason) => ws.end(code, reason),
        },
        data.scope,
      );
    },
    message: (ws, message, isBinary) => ws.getUserData().session?.onMessage(message, isBinary),
    drain: (ws) => ws.getUserData().session?.onDrain(),
    close: (ws) => {
      const data = ws.getUserData();
      data.session?.onClose();
      data.session = null;
    },
  });
}
