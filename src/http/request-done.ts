/**
 * The per-request completion hook of the HTTP layer. The adapter calls every observer once per
 * request, after its answer is written (or when the client went away first): the access log is one
 * observer, request metrics can be another. Observers run on the event loop right after the write,
 * so each must be cheap and must not throw (one that throws is logged and the others still run).
 */

/** What an observer learns about one finished request. Never a header value, query string or body. */
export interface RequestDoneInfo {
  method: string;
  /** The route template (`/v1/robots/{robotId}`), or null when no route matched or the request was refused before routing. */
  route: string | null;
  /** The status written; 499 when the client went away before the answer (nothing was written). */
  status: number;
  /** From the first byte the adapter saw to the answer written, in milliseconds. */
  durationMs: number;
  /** The API key's id when the request authenticated, else null. */
  keyId: string | null;
  requestId: string;
  /** The W3C trace id from `traceparent`, or null. */
  traceId: string | null;
  /** True when the client closed the connection before the answer. */
  aborted: boolean;
}

export type RequestObserver = (info: RequestDoneInfo) => void;

/** Status reported for a request whose client went away before the answer (nginx's convention). */
export const CLIENT_CLOSED_STATUS = 499;
