/**
 * Reads an HTTP/2 stream's DATA chunks without Node's Readable machinery: the telemetry fast path's
 * last step below grpc-js (telemetry-frames.ts takes the stream, this reads it).
 *
 * Why: Node hands every chunk of an Http2Stream to `stream.push(chunk)`, and a Readable in flowing
 * mode then emits 'data', schedules a `process.nextTick` to "read more" and calls `_read`, which
 * re-arms the native read, once per chunk. At 1,000 robots x 10 Hz (one chunk per message) that
 * machinery was 13% of the gateway's main thread, our whole 'data' handler included 31%
 * (bench/README.md, "HTTP/2 chunk tap"). Node has no public per-chunk callback for HTTP/2 streams
 * (net.Socket's `onread` option does not exist here), so the stream's `push` is shadowed on this one
 * instance: a DATA chunk goes straight to the reader; the end of the stream (`push(null)`) and
 * anything else still go to Readable's own `push`, so 'end', errors and 'close' work as before.
 *
 * If Node ever stops delivering chunks through `push`, they arrive as 'data' events instead (the
 * listener stays on): slower, never lost. `direct` counts chunks taken the fast way (tests pin it).
 *
 * Pausing: `pause()` pauses the Readable, which stops the native read at once: nghttp2 then withholds
 * this stream's flow-control window (the connection's is returned, so the robot's control stream
 * keeps flowing). Chunks already on their way arrive anyway; they are held, in order, and handed over
 * at `resume()`. Bound: what the robot may send without a window update, its HTTP/2 stream window
 * (64 KiB by default), the same bytes a paused Readable would buffer. The end of the stream waits for
 * them: Readable would emit 'end' while they are held (its own buffer is empty), so the tap reports
 * the end itself, after the last held chunk.
 */
import type { ServerHttp2Stream } from 'node:http2';
import { Readable } from 'node:stream';

export interface ChunkTap {
  /** Stops reading (chunks in flight are held) until resume(). */
  pause(): void;
  /** Hands over held chunks in order, then reads on (unless a chunk handed over paused it again). */
  resume(): void;
  /** Drops held chunks and every later one (the reader is done with this stream). */
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
  /** The peer half-closed while paused: onEnd waits for the held chunks. */
  let endHeld = false;
  let held: Buffer[] = [];
  let direct = 0;

  const take = (chunk: Buffer): void => {
    if (closed) return;
    if (paused) held.push(chunk);
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
  // The fallback, and how a chunk Readable buffered before the shadow was put on gets out.
  stream.on('data', take);
  stream.on('end', () => {
    if (closed) return;
    if (paused) endHeld = true;
    else onEnd();
  });

  /** Re-arms the native read: with `push` shadowed, Readable thinks its first `_read` is still pending. */
  const readOn = (): void => {
    stream.resume();
    if (shadowable && !stream.destroyed) (stream as unknown as { _read(n: number): void })._read(0);
  };

  readOn();
  return {
    pause(): void {
      if (paused || closed) return;
      paused = true;
      stream.pause();
    },
    resume(): void {
      if (!paused || closed) return;
      paused = false;
      while (held.length > 0 && !paused && !closed) onChunk(held.shift()!);
      if (paused || closed) return;
      if (endHeld) {
        endHeld = false;
        onEnd();
        return;
      }
      readOn();
    },
    close(): void {
      closed = true;
      held = [];
      // Keep reading and discarding: a paused stream would hold the robot's window forever.
      if (paused) {
        paused = false;
        readOn();
      }
    },
    get direct(): number {
      return direct;
    },
  };
}
