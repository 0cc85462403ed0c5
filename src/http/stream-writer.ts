/**
 * Writes a streamed body (src/api/stream-body.ts) on a uWS response, with chunked transfer encoding.
 * Backpressure is uWS's: a chunk the socket could not take at once stays in uWS's buffer and the
 * producer's next `write` waits for `onWritable` (the socket drained), so at most one chunk per
 * response waits in the gateway whatever the client's speed.
 */
import type * as uws from './uws.js';
import type { ResponseSink } from '../api/stream-body.js';

/** The client went away while a streamed body was written. */
export class StreamAborted extends Error {
  constructor() {
    super('the client closed the connection during a streamed response');
  }
}

/**
 * The sink of a streamed body on a uWS response whose status and headers the caller wrote (corked).
 * The response's `onAborted` must call {@link StreamWriter.abort}.
 */
export class StreamWriter implements ResponseSink {
  private aborted = false;
  private readonly controller = new AbortController();
  /** Aborted with the connection (see {@link ResponseSink.signal}). */
  readonly signal = this.controller.signal;
  private waiting: { resolve: () => void; reject: (e: Error) => void } | null = null;

  constructor(private readonly res: uws.HttpResponse) {}

  write(chunk: Uint8Array): Promise<void> {
    if (this.aborted) return Promise.reject(new StreamAborted());
    if (chunk.byteLength === 0) return Promise.resolve();
    let ok = false;
    this.res.cork(() => {
      ok = this.res.write(chunk);
    });
    if (ok) return Promise.resolve();
    // uWS kept what the socket did not take; the next chunk waits until it has drained.
    return new Promise<void>((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.res.onWritable(() => {
        const w = this.waiting;
        this.waiting = null;
        w?.resolve();
        return true;
      });
    });
  }

  /** Ends the body (the terminating chunk). */
  end(): void {
    if (this.aborted) return;
    this.res.cork(() => {
      this.res.end();
    });
  }

  /** Closes the connection without ending the body: the client sees it incomplete. */
  fail(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.controller.abort(new StreamAborted());
    this.res.close();
  }

  /** The client went away: a waiting producer is rejected. */
  abort(): void {
    this.aborted = true;
    this.controller.abort(new StreamAborted());
    const w = this.waiting;
    this.waiting = null;
    w?.reject(new StreamAborted());
  }
}
