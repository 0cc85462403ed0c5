/**
 * What the transport adapter (uws-adapter.ts) hands the router and gets back: plain objects, never
 * uWS's request/response, so the pipeline is testable without sockets. What a route is and what its
 * handler sees is the API's contract (src/api/route.ts).
 */

/** What the adapter copies synchronously out of a uWS request. */
export interface PlainRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/robots/…`. */
  path: string;
  /** Raw query string without `?` ('' when none). */
  query: string;
  /** Only the headers the core uses, lower-cased names. */
  headers: {
    authorization?: string;
    'content-type'?: string;
    'idempotency-key'?: string;
  };
  body: Buffer;
  remoteAddress: string;
}

export interface PlainResponse {
  status: number;
  headers: Record<string, string>;
  /** Already-serialized body (JSON text for every API response). */
  body: string;
}
