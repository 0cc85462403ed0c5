/**
 * Checks on a request's header block that uWebSockets.js leaves to the application, made in one pass
 * over every header field line (uWS's `req.forEach`, which lists repeated fields one by one).
 *
 * uWS frames a body by the FIRST `Content-Length` it finds, so `Content-Length: 0` followed by
 * `Content-Length: N` would let the N bytes after the header block be parsed as a second, smuggled
 * request. RFC 9112 section 6.3 makes a request with an invalid Content-Length a
 * framing error the server must answer with 400 and a closed connection; RFC 9110 section 8.6 allows
 * (MAY) folding repeated identical values into one, and we do not: no client we serve sends two, and a
 * proxy in front of us that sees two equal lines may still pick a different framing than we would.
 * Repeated `Transfer-Encoding` lines are refused for the same reason. Everything uWS refuses by itself
 * (Content-Length with Transfer-Encoding, a malformed Content-Length, a coding other than chunked)
 * never reaches this code: see docs/http-hardening.md for the exact split. A chunked body is refused
 * too (411, connection closed): only Content-Length frames a request body here.
 */
import { apiError, type ApiError } from '../errors/catalog.js';
import type { PlainRequest } from './types.js';

/**
 * Largest request line plus header block the gateway serves, in bytes (Node's default); larger ones
 * get a JSON 431 up to uWS's own buffer (uws-limits.ts), an HTML 431 from uWS beyond it.
 */
export const MAX_HEADER_BYTES = 16 * 1024;

/** What {@link inspectHead} found. */
export interface RequestHead {
  /** The headers the core uses and the wanted ones (lower-cased names). */
  headers: PlainRequest['headers'];
  /** The request declares a body (a non-zero Content-Length, or chunked transfer coding). */
  hasBody: boolean;
  /** The declared body length, or null when there is none or it is chunked. */
  contentLength: number | null;
  /**
   * Why the request is refused before routing, or null. `framing` errors mean the connection's byte
   * stream can no longer be trusted: the answer closes it.
   */
  problem: { error: ApiError; framing: boolean } | null;
}

const NO_MORE_HEADERS: ReadonlySet<string> = new Set();

/**
 * Reads every header field line once.
 * @param forEachHeader uWS's `req.forEach` (every field line, repeated names included, lower-cased)
 * @param requestLineBytes length of the request line (counted toward {@link MAX_HEADER_BYTES})
 * @param wanted further headers to copy (lower-cased; the routes' declared ones, Router.headerNames)
 */
export function inspectHead(
  forEachHeader: (cb: (key: string, value: string) => void) => void,
  requestLineBytes: number,
  wanted: ReadonlySet<string> = NO_MORE_HEADERS,
): RequestHead {
  const headers: Record<string, string> = {};
  let bytes = requestLineBytes;
  let lengthLines = 0;
  let lengthValue = '';
  let codingLines = 0;
  let codingValue = '';
  let hostLines = 0;
  let repeated: string | null = null;
  forEachHeader((key, value) => {
    // `name: value\r\n`
    bytes += key.length + value.length + 4;
    switch (key) {
      case 'content-length':
        lengthLines++;
        lengthValue = value;
        return;
      case 'transfer-encoding':
        codingLines++;
        codingValue = value;
        return;
      case 'authorization':
      case 'content-type':
      case 'idempotency-key':
        if (headers[key] === undefined) headers[key] = value;
        else repeated ??= key;
        return;
      case 'host':
        // RFC 9112 section 3.2: more than one Host line is a 400. The three above are read by the core,
        // which sees one value; a proxy in front may have acted on the other.
        if (++hostLines > 1) repeated ??= key;
        return;
      default: {
        // A header some route declares (cookie, if-none-match, origin, accept-encoding, ...). Repeated
        // lines of a list-valued field mean their comma-joined value (RFC 9110 section 5.3); cookie
        // lines join with `; ` (RFC 6265 section 5.4). Every other header is skipped unread.
        if (!wanted.has(key)) return;
        const prev = headers[key];
        headers[key] = prev === undefined ? value : `${prev}${key === 'cookie' ? '; ' : ', '}${value}`;
        return;
      }
    }
  });

  let problem: RequestHead['problem'] = null;
  if (lengthLines > 1) {
    problem = framing('Content-Length appears more than once');
  } else if (codingLines > 1) {
    problem = framing('Transfer-Encoding appears more than once');
  } else if (codingLines === 1 && codingValue.trim().toLowerCase() !== 'chunked') {
    problem = framing('the only transfer coding accepted is chunked');
  } else if (codingLines === 1) {
    // uWS's chunked parser is lenient where RFC 9112 is strict (a bare LF after the last chunk, the
    // CRLF after chunk data never checked, an extension read as part of the size): a proxy in front
    // would frame such a body differently and a request hidden in it would run. No route needs a
    // streamed body, so none is read: the connection is closed like any other framing error.
    problem = { error: apiError('length_required'), framing: true };
  } else if (bytes > MAX_HEADER_BYTES) {
    problem = { error: apiError('headers_too_large', { limit: MAX_HEADER_BYTES }), framing: false };
  } else if (repeated !== null) {
    problem = { error: apiError('duplicate_header', { header: headerName(repeated) }), framing: false };
  }
  const contentLength = lengthLines === 1 ? Number(lengthValue) : null;
  return {
    headers,
    hasBody: codingLines > 0 || (contentLength !== null && contentLength > 0),
    contentLength: codingLines > 0 ? null : contentLength,
    problem,
  };
}

function framing(detail: string): { error: ApiError; framing: boolean } {
  return { error: apiError('ambiguous_framing', { detail }), framing: true };
}

/** `idempotency-key` -> `Idempotency-Key`, for the message. */
function headerName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
}
