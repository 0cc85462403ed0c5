/**
 * Reads an HTTP/2 stream's DATA chunks without Node's Readable machinery: the telemetry fast path's
 * last step below grpc-js (telemetry-frames.ts takes the stream, this reads it).
 *
 * Why: Node hands every chunk of an Http2Stream to `stream.push(chunk)`, and a Readable in flowing
 * mode then emits 'data', schedules a `process.nextTick` to "read more" and calls `_read`, which
 * re-arms the native read, once per chunk. At 1,000 robots x 10 Hz (one chunk per message)
 * that machinery, apart from our reader, was over a tenth of the gateway's main thread, and the
 * gateway used about as much less CPU without it (bench/notes/telemetry-ingest.md, "HTTP/2 chunk
 * tap"). Node has no public per-chunk callback for HTTP/2 streams
 * (net.Socket's `onread` option does not exist here), so the stream's `push` is shadowed on this one
 * instance: a DATA chunk goes straight to the reader; the end of the stream (`push(null)`) and
 * anything else still go to Readable's own `push`, so 'end' (see below), errors and 'close' work as before.
 *
 * If Node ever stops delivering chunks through `push`, they arrive as 'data' events instead (the
 * listener stays on): slower, never lost. `direct` counts chunks taken the fast way (tests pin it).
 *
 * Pausing: `pause()` pauses the Readable, which stops the native read at once: nghttp2 then withholds
 * this stream's flow-control window (the connection's is returned, so the robot's control stream
 * keeps flowing). Chunks already on their way arrive anyway; they are held, in order, and handed over
 * after `resume()`. Bound: what the robot may send without a window update, its HTTP/2 stream window
 * (64 KiB by default), the same bytes a paused Readable would buffer. The end of the stream waits for
 * them: Readable would emit 'end' while they are held (its own buffer is empty), so the tap reports
 * the end itself, after the last held chunk.
 */
import type { ServerHttp2Stream } from 'node:http2';
import { Readable } from 'node:stream';

/** The reader's handle on a tapped stream (the robot link's backpressure pauses and resumes it). */
export interface ChunkTap {
  /** Stops reading (chunks in flight are held) until resume(). */
  pause(): void;
  /**
   * Reads on. Held chunks are handed over from a later turn of the event loop, never from inside this
   * call: the caller is the backpressure gate resuming every robot, and a chunk handed over here could
   * make the ingest pause them again in the middle of that loop.
   */
  resume(): void;
  /** Drops held chunks and every later one, and reads on, discarding (the reader is done with this stream). */
  close(): void;
  /** Chunks delivered through the shadowed `push` (the fast way), not through 'data'. */
  readonly direct: number;
}

type Push = (this: Readable, chunk: unknown, encoding?: BufferEncoding) => boolean;

/**
 * Starts reading `stream` (it must be paused, with no 'data' listener): every DATA chunk goes to
 * `onChunk`, in order, exactly once, then `onEnd` when the peer half-closed. Neither runs after close().
 */
export function tapChunks(stream: ServerHttp2Stream, onChunk: (chunk: Buffer) => void, onEnd: () => void): ChunkTap {
  let paused = false;
  let closed = false;
  /** The peer half-closed while chunks were held: onEnd waits for them. */
  let endHeld = false;
  /** Chunks that arrived while paused (or before the tap), oldest first; bounded by the stream window. */
  const held: Buffer[] = [];
  let drainScheduled = false;
  let direct = 0;

  const take = (chunk: Buffer): void => {
    if (closed) return;
    // Behind held chunks, never ahead of them.
    if (paused || held.length > 0) held.push(chunk);
    else onChunk(chunk);
  };

  // Called with the stream as `this`, never detached from it.
  const readablePush = Reflect.get(Readable.prototype, 'push') as Push;
  const shadowable = typeof readablePush === 'function' && stream instanceof Readable && (stream as { push: unknown }).push === readablePush
    && !Object.prototype.hasOwnProperty.call(stream, 'push') && typeof (stream as { _read?: unknown })._read === 'function';
  if (shadowable) {
    const shadow: Push = function (chunk, encoding) {
      if (!(chunk instanceof Buffer)) return readablePush.call(this, chunk, encoding);
      direct++;
      take(chunk);
      // false makes Node stop the native read (it already is stopped while paused).
      return !paused;
    };
    Object.defineProperty(stream, 'push', { value: shadow, configurable: true, writable: true });
  }
  // What Readable buffered before the tap (the robot wrote while grpc-js authenticated the call) comes
  // first. Taken before the 'data' listener is on: read() emits 'data' for what it returns.
  for (let chunk = stream.read() as Buffer | null; chunk !== null; chunk = stream.read() as Buffer | null) held.push(chunk);
  // The fallback, should Node stop handing chunks to `push`.
  stream.on('data', take);
  // Other 'end' listeners (grpc-js's own, which only marks its read side done) may see the end
  // before the held chunks are handed over; this one waits for them.
  stream.on('end', () => {
    if (closed) return;
    if (paused || drainScheduled || held.length > 0) endHeld = true;
    else onEnd();
  });

  /** Re-arms the native read: with `push` shadowed, Readable thinks its first `_read` is still pending. */
  const readOn = (): void => {
    stream.resume();
    if (shadowable && !stream.destroyed) (stream as unknown as { _read(n: number): void })._read(0);
  };

  const drain = (): void => {
    drainScheduled = false;
    while (held.length > 0 && !paused && !closed) onChunk(held.shift()!);
    if (paused || closed) return;
    if (endHeld) {
      endHeld = false;
      onEnd();
      return;
    }
    readOn();
  };

  /** Hands held chunks over, then reads on; from a later turn (see resume()). */
  const drainLater = (): void => {
    if (drainScheduled) return;
    drainScheduled = true;
    setImmediate(drain);
  };

  if (held.length > 0) drainLater();
  else readOn();
  return {
    pause(): void {
      if (paused || closed) return;
      paused = true;
      stream.pause();
    },
    resume(): void {
      if (!paused || closed) return;
      paused = false;
      if (held.length > 0 || endHeld) drainLater();
      else readOn();
    },
    close(): void {
      if (closed) return;
      closed = true;
      held.length = 0;
      paused = false;
      // Keep reading and discarding: a stream left paused would hold the robot's window forever.
      readOn();
    },
    get direct(): number {
      return direct;
    },
  };
}
