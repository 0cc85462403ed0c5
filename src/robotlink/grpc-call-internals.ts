/**
 * The one place that reaches below grpc-js's public server-call API. Two measured costs have no
 * public option (connection-window.ts, telemetry-frames.ts), so both walk from a call to grpc-js's
 * base call, which holds the HTTP/2 stream. Every field is checked at run time; when grpc-js changes
 * shape the callers fall back to the public path (tests pin the installed grpc-js).
 */
import type { Http2Session, ServerHttp2Stream } from 'node:http2';

/** grpc-js's BaseServerInterceptingCall, as far as the robot link reads it (all optional: unchecked). */
export interface BaseCallInternals {
  stream?: ServerHttp2Stream & { session?: Http2Session };
  nextCall?: BaseCallInternals;
  /** The request's `grpc-encoding` ('identity' when absent). */
  incomingEncoding?: unknown;
  /** Messages read from the stream and not yet delivered. */
  readQueue?: unknown;
  /** grpc-js's framing reader; `readState` 0 is "between messages". */
  decoder?: { readState?: unknown };
}

/** grpc-js's base call under a server call's interceptors; undefined when it cannot be found. */
export function baseCallOf(call: object): BaseCallInternals | undefined {
  let c = (call as { call?: BaseCallInternals }).call;
  // Server interceptors wrap the base call; walk down to it.
  for (let depth = 0; c !== undefined && c !== null && depth < 8; depth++) {
    if (c.stream !== undefined) return c;
    c = c.nextCall;
  }
  return undefined;
}
