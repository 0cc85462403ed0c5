/**
 * Request correlation: the `X-Request-Id` a caller (or a proxy in front) sends is kept when it is safe
 * to log and to echo, else a fresh one is minted; a W3C `traceparent` contributes its trace id to the
 * request's log lines (https://www.w3.org/TR/trace-context/#traceparent-header).
 */
import { randomUUID } from 'node:crypto';

/** Longest accepted `X-Request-Id` (a UUID is 36, a ULID 26; proxies' ids stay well under this). */
export const MAX_REQUEST_ID_LENGTH = 128;

// Letters, digits and `-_.:@/+=`: what request ids use (UUIDs, ULIDs, base64url, `host:seq`). No
// space, quote, comma or control character, so an id is safe in a log line and a response header.
const REQUEST_ID = /^[A-Za-z0-9\-_.:@/+=]+$/;

/**
 * The request id to use: the caller's `X-Request-Id` when it is 1..128 characters of the safe set,
 * else a new UUID (a repeated header arrives comma-joined and is replaced too).
 */
export function requestIdFrom(header: string | undefined): string {
  if (header !== undefined && header.length > 0 && header.length <= MAX_REQUEST_ID_LENGTH && REQUEST_ID.test(header)) return header;
  return randomUUID();
}

// version-traceid-parentid-flags; later versions may append fields after the flags.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_PARENT = '0'.repeat(16);

/**
 * The trace id of a valid `traceparent`, or null (absent, malformed, version `ff`, an all-zero id, or
 * extra fields on version 00: the specification says to ignore such a header).
 */
export function traceIdFrom(header: string | undefined): string | null {
  if (header === undefined || header.length > 512) return null;
  const m = TRACEPARENT.exec(header.trim());
  if (m === null) return null;
  const [, version, traceId, parentId, , rest] = m;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (traceId === ZERO_TRACE || parentId === ZERO_PARENT) return null;
  return traceId ?? null;
}
