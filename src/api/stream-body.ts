/**
 * A response body written as it is produced (an export too large to build in memory): the handler
 * returns a {@link ResponseStream}; the transport (src/http/stream-writer.ts) sends the status and
 * headers, then the producer's chunks, each `write` resolving when the socket can take more.
 *
 * A producer that fails after the headers are out cannot change the status: the connection is closed
 * without the end of the body, which every HTTP client reports as an incomplete body (never a
 * silently short one). A client that goes away rejects the pending `write`.
 */

/** Where a producer writes. */
export interface ResponseSink {
  /** Sends `chunk`; resolves when the gateway may produce the next one (the socket took it or drained). */
  write(chunk: Uint8Array): Promise<void>;
  /** Aborted when the client went away or the connection was closed: work for this body can stop. */
  readonly signal?: AbortSignal;
}

/** The body of a streamed response. */
export class ResponseStream {
  /**
   * @param contentType its media type
   * @param produce writes the body into the sink and resolves when it is complete; it runs only for
   *   a GET (a HEAD answer is the headers alone)
   */
  /**
   * @param unused called instead when `produce` will not run (a HEAD, or a client gone before the
   *   headers), so what the handler took for the body (a place among the exports) is given back
   */
  constructor(
    readonly contentType: string,
    readonly produce: (sink: ResponseSink) => Promise<void>,
    readonly unused: () => void = () => undefined,
  ) {}
}
