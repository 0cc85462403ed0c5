/**
 * Widens the HTTP/2 connection-level receive window of a robot's connection once it authenticated.
 *
 * Why: Node's HTTP/2 gives the connection-level window back as soon as data arrives, so nghttp2 sends
 * a WINDOW_UPDATE every time half of the 64 KiB default has been received, and Node writes pending
 * frames after every socket read: at peak telemetry rates that was a `writev` per read, a tenth of the
 * gateway's main thread over one shared connection (perf, bench/notes/telemetry-ingest.md, "Targets 1
 * and 2 again: connection window"). With an
 * 8 MiB connection window the connection-level updates are 128x rarer; each stream still sends its own
 * every 32 KiB, so a robot with a connection of its own gains little. grpc-js has no server option for
 * it (`grpc-node.flow_control_window` is client-only), so the session is reached through the call.
 *
 * What it does not change: each stream keeps its own 64 KiB window, and that is what holds a paused
 * telemetry stream (backpressure) and bounds what the gateway buffers per robot. The connection
 * window only says how much all streams together may have in flight, and Node never holds it back.
 */
import type { Http2Session } from 'node:http2';
import { baseCallOf } from './grpc-call-internals.js';

/** Connection-level receive window for robot connections. */
export const ROBOT_CONNECTION_WINDOW_BYTES = 8 * 1024 * 1024;

const widened = new WeakSet<Http2Session>();

/**
 * The HTTP/2 session a grpc-js server call runs on; 'closing' when its stream is already destroyed;
 * undefined when grpc-js no longer exposes it (a test pins this for the installed grpc-js).
 */
export function sessionOfCall(call: object): Http2Session | 'closing' | undefined {
  const stream = baseCallOf(call)?.stream;
  if (stream === undefined) return undefined;
  return stream.session ?? (stream.destroyed === true ? 'closing' : undefined);
}

/**
 * Sets the connection-level receive window of `call`'s connection to `bytes`, once per connection.
 * @returns 'widened' the first time for a connection, 'already' after, 'closing' when the connection
 *   is going away, 'unavailable' when the session cannot be reached (telemetry then works as before,
 *   at a higher CPU cost).
 */
export function widenConnectionWindow(call: object, bytes = ROBOT_CONNECTION_WINDOW_BYTES): 'widened' | 'already' | 'closing' | 'unavailable' {
  const session = sessionOfCall(call);
  if (session === 'closing') return 'closing';
  if (session === undefined || typeof session.setLocalWindowSize !== 'function') return 'unavailable';
  if (widened.has(session)) return 'already';
  try {
    session.setLocalWindowSize(bytes);
  } catch {
    // The connection is closing (ERR_HTTP2_INVALID_SESSION): nothing to widen.
    return 'closing';
  }
  widened.add(session);
  return 'widened';
}
