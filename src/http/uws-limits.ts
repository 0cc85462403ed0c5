/**
 * Limits of uWebSockets.js that are read from the environment when its native module loads, so this
 * module must be imported before uWS loads (the uWS facade, uws.ts, imports it first; nothing else
 * loads uWS).
 *
 * uWS answers a request line plus header block larger than its buffer (4 KiB by default) with its own
 * HTML 431 and no hook for the application. The buffer is raised to {@link UWS_HEADER_BUFFER_BYTES} so
 * that the gateway sees header blocks up to that size and answers those over its own limit
 * (MAX_HEADER_BYTES in request-head.ts, 16 KiB like Node's default) with JSON. Only blocks over 64 KiB
 * still get uWS's HTML 431. The buffer is per connection and only filled by a client that sends that
 * much; the idle timeout (10 s) bounds how long it is held.
 */

/** Header bytes uWS buffers per request before answering 431 by itself. */
export const UWS_HEADER_BUFFER_BYTES = 64 * 1024;

// A write for uWS's native module, not a setting of ours: uWS reads it from the environment only.
// eslint-disable-next-line no-restricted-properties
process.env.UWS_HTTP_MAX_HEADERS_SIZE = String(UWS_HEADER_BUFFER_BYTES);
