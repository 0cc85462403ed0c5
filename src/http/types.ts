/**
 * What the transport adapter (uws-adapter.ts) hands the router and gets back: plain objects, never
 * uWS's request/response, so the pipeline is testable without sockets. What a route is and what its
 * handler sees is the API's contract (src/api/route.ts).
 */

import type { ResponseStream } from '../api/stream-body.js';

/** What the adapter copies synchronously out of a uWS request. */
export interface PlainRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/robots/…`. */
  path: string;
  /** Raw query string without `?` ('' when none). */
  query: string;
  /**
   * Lower-cased names: the ones the core reads (authorization, content-type, idempotency-key) and
   * those some route declares (RouteDef.headers); the adapter copies no other header.
   */
  headers: RequestHeaders;
  body: Buffer;
  remoteAddress: string;
  /** The request id (X-Request-Id, validated or minted by the adapter); absent in socket-less tests. */
  requestId?: string;
  /** The W3C trace id of a valid `traceparent`, or null. */
  traceId?: string | null;
  /** Filled in by the router for the completion hook (request-done.ts); absent in socket-less tests. */
  notes?: RequestNotes;
}

/** What the router learns about a request that the adapter's completion observers report. */
export interface RequestNotes {
  /** The matched route's template, e.g. `/v1/robots/{robotId}`. */
  route: string | null;
  /** The authenticated API key's id. */
  keyId: string | null;
}

/** Request headers as the adapter copied them (see {@link PlainRequest.headers}). */
export interface RequestHeaders {
  authorization?: string;
  'content-type'?: string;
  'idempotency-key'?: string;
  readonly [name: string]: string | undefined;
}

export interface PlainResponse {
  status: number;
  headers: Record<string, string>;
  /** Already-serialized body: JSON text, or a RawBody's bytes (src/api/raw-body.ts). */
  body: string | Uint8Array;
  /** A body written as it is produced (src/api/stream-body.ts); `body` is then ''. */
  stream?: ResponseStream;
}
