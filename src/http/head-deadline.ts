/**
 * A deadline for a connection's first request head (docs/http-hardening.md).
 *
 * uWebSockets.js takes a header line ended by a bare CR or LF, or an obs-fold line, as an unfinished
 * header block and waits for more bytes; the application never hears of the request, and uWS's idle
 * timeout (a compile-time 10 s, checked every 4 s) closes the connection 10-14 s later, silently. This
 * module answers such a connection itself: when no request of the connection's client address has
 * reached a handler within {@link HEAD_DEADLINE_MS} of the connection opening, the connection gets a
 * JSON 400 `request_head_incomplete` and is closed.
 *
 * uWS reports connections to `app.filter` with a response object for the socket, and writing an answer
 * through it works, but that object cannot be matched to a later request's response object (different
 * JS objects, no socket identity exposed). Hence the rule is per client address, which keeps it safe:
 * - the answer goes only to a connection whose address has had no request at all since it opened, so
 *   that connection has certainly not had a request reach a handler: it is not answering something else;
 * - the socket is known to be alive: an `onAborted` callback set on it at open tells when it closes (uWS
 *   calls it from its close handler), and nothing but a request can remove that callback (a handler's
 *   own `onAborted` replaces it, and a WebSocket upgrade destroys it: both are requests, counted here).
 * What is not covered (uWS's 10-14 s silent close still applies): a bad head as the second or later
 * request on a keep-alive connection, and a bad head on one connection while another connection from
 * the same address is sending requests. Telling those apart from an idle keep-alive connection would
 * need the bytes uWS buffers, which it does not expose.
 *
 * Cost: per connection, one filter call at open and at close, one `onAborted` and one timer; per request,
 * one `Map.get` on the client address while connections are waiting for their first request.
 */
import type * as uws from './uws.js';
import type { Logger } from 'pino';
import { apiError } from '../errors/catalog.js';

/** How long a new connection may take to deliver its first complete request head. */
export const HEAD_DEADLINE_MS = 2000;

/** Connections of one client address waiting for their first request, and requests seen since. */
interface AddressState {
  waiting: number;
  requests: number;
}

/** Tracks new connections and answers those whose head never completes (see the module comment). */
export class HeadDeadline {
  private readonly byAddress = new Map<string, AddressState>();
  private readonly body: string;

  constructor(
    private readonly log: Logger,
    private readonly deadlineMs = HEAD_DEADLINE_MS,
  ) {
    this.body = JSON.stringify(apiError('request_head_incomplete', { seconds: deadlineMs / 1000 }).toBody());
  }

  /** Registers the connection tracking on `app`; call before `listen`. */
  attach(app: uws.TemplatedApp): void {
    app.filter((res, count) => {
      if (count === 1) this.opened(res);
    });
  }

  /** Notes a request from `address` that reached a handler (HTTP route or WebSocket upgrade). */
  sawRequest(address: string): void {
    if (this.byAddress.size === 0) return;
    const state = this.byAddress.get(address);
    if (state !== undefined) state.requests++;
  }

  /** Connections waiting for their first request (for tests and metrics). */
  waiting(): number {
    let n = 0;
    for (const s of this.byAddress.values()) n += s.waiting;
    return n;
  }

  private opened(res: uws.HttpResponse): void {
    const address = ADDRESS_DECODER.decode(res.getRemoteAddressAsText());
    let state = this.byAddress.get(address);
    if (state === undefined) {
      state = { waiting: 0, requests: 0 };
      this.byAddress.set(address, state);
    }
    state.waiting++;
    const requestsAtOpen = state.requests;
    let open = true;
    const done = (): void => {
      clearTimeout(timer);
      state.waiting--;
      if (state.waiting === 0) this.byAddress.delete(address);
    };
    // Called by uWS when this socket closes while no request has replaced it (see the module comment).
    res.onAborted(() => {
      if (!open) return;
      open = false;
      done();
    });
    const decide = (): void => {
      if (!open) return;
      open = false;
      const quiet = state.requests === requestsAtOpen;
      done();
      // A request from this address since the open may have been on this connection: then uWS owns the
      // socket's state again, and this object must not be used.
      if (!quiet) return;
      this.log.info({ remoteAddress: address, deadlineMs: this.deadlineMs }, 'no complete request head in time; answered 400 and closed');
      res.cork(() => {
        res.writeStatus('400 Bad Request').writeHeader('content-type', 'application/json').end(this.body, true);
      });
    };
    // Decided one loop turn later: after a stall of the event loop (or of the whole process) the timers
    // run before the poll phase in which uWS reads what arrived meanwhile; setImmediate runs after it,
    // so a request head that is already in the socket is counted before the connection is judged.
    const timer = setTimeout(() => setImmediate(decide), this.deadlineMs);
    timer.unref();
  }
}

const ADDRESS_DECODER = new TextDecoder();

type Handler = (res: uws.HttpResponse, req: uws.HttpRequest, context?: uws.us_socket_context_t) => void | Promise<void>;

const ROUTE_METHODS = new Set(['get', 'post', 'options', 'del', 'patch', 'put', 'head', 'connect', 'trace', 'any']);

/**
 * `app` as seen by code that adds routes of its own (the telemetry WebSocket, /metrics): every handler
 * it registers, and every WebSocket upgrade, first reports its request to `deadline`, so the deadline
 * never writes to a socket a request has taken over. A WebSocket route must have an `upgrade` handler
 * (uWS's built-in upgrade would move the socket without a report).
 */
export function reportingRoutes(app: uws.TemplatedApp, deadline: HeadDeadline): uws.TemplatedApp {
  const report = (res: uws.HttpResponse): void => {
    deadline.sawRequest(ADDRESS_DECODER.decode(res.getRemoteAddressAsText()));
  };
  const proxy: uws.TemplatedApp = new Proxy(app, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (typeof prop === 'string' && ROUTE_METHODS.has(prop)) {
        return (pattern: uws.RecognizedString, handler: Handler) => {
          (value as (p: uws.RecognizedString, h: Handler) => unknown).call(target, pattern, (res: uws.HttpResponse, req: uws.HttpRequest) => {
            report(res);
            return handler(res, req);
          });
          return proxy;
        };
      }
      if (prop === 'ws') {
        return (pattern: uws.RecognizedString, behavior: uws.WebSocketBehavior<unknown>) => {
          const upgrade = behavior.upgrade;
          if (upgrade === undefined) throw new Error(`WebSocket route ${typeof pattern === "string" ? pattern : '(binary pattern)'} needs an upgrade handler (src/http/head-deadline.ts)`);
          target.ws(pattern, {
            ...behavior,
            upgrade: (res, req, context) => {
              report(res);
              return upgrade(res, req, context);
            },
          });
          return proxy;
        };
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
  return proxy;
}
