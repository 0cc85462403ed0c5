/**
 * The telemetry fast path: a PublishTelemetry call's HTTP/2 stream is read directly
 * (grpc-message-reader.ts) instead of through grpc-js's per-message machinery.
 *
 * Why: grpc-js hands every received message through a read queue, an async decompression step and
 * an object-mode stream, and pauses and resumes the HTTP/2 stream around each one. At 1,000 robots x
 * 10 Hz a bare grpc-js server that drops every message used over twice the CPU of node:http2 alone with
 * the same framing (bench/notes/telemetry-ingest.md, "Telemetry fast path"): most of the gateway's
 * robot-link cost. grpc-js
 * has no option for a raw reader, so the call's stream is taken over here.
 *
 * What stays with grpc-js: authentication metadata, deadlines, cancellation, response headers,
 * receipts and the final status are all written through the call as before; only reading moves. The
 * control stream (Connect, where commands go) is never taken over.
 *
 * When it applies: the request is identity-encoded (a compressed stream stays on grpc-js's reader,
 * which decompresses), grpc-js has read nothing yet, and its one 'data' listener is found. Otherwise
 * the call is left as it was and its messages arrive through grpc-js ('data' on the call).
 */
import type { ServerHttp2Stream } from 'node:http2';
import { baseCallOf } from './grpc-call-internals.js';

export type TakeoverResult =
  | { kind: 'taken'; stream: ServerHttp2Stream }
  /** The robot compresses its messages: grpc-js's reader decompresses them. */
  | { kind: 'compressed' }
  /** The stream is already gone. */
  | { kind: 'closing' }
  /** grpc-js's internals are not as expected (an upgrade changed them): the public path is used. */
  | { kind: 'unavailable' };

/**
 * Detaches grpc-js's reader from a freshly accepted call's HTTP/2 stream and returns the stream,
 * paused, for the caller to read (http2-chunk-tap.ts resumes it). Must run in the method
 * handler, before anything reads the call.
 */
export function takeTelemetryFrames(call: object): TakeoverResult {
  const base = baseCallOf(call);
  const stream = base?.stream;
  if (base === undefined || stream === undefined || typeof stream.listeners !== 'function') return { kind: 'unavailable' };
  if (stream.destroyed) return { kind: 'closing' };
  if (base.incomingEncoding !== 'identity') {
    return typeof base.incomingEncoding === 'string' ? { kind: 'compressed' } : { kind: 'unavailable' };
  }
  // Nothing read yet: no queued message, grpc-js's framing reader between messages.
  if (!Array.isArray(base.readQueue) || base.readQueue.length !== 0 || base.decoder?.readState !== 0) return { kind: 'unavailable' };
  const listeners = stream.listeners('data');
  if (listeners.length !== 1) return { kind: 'unavailable' };
  stream.removeListener('data', listeners[0] as (chunk: Buffer) => void);
  // grpc-js paused it at accept; it stays paused until the new reader resumes it.
  stream.pause();
  return { kind: 'taken', stream };
}
