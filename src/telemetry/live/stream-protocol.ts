/**
 * The telemetry WebSocket protocol (docs/telemetry-stream.md is the user-facing description): close
 * codes, server notices, and the parser of client messages. Client messages are tiny control frames,
 * so plain JSON.parse with a size cap is fine here; the per-sample path never parses anything.
 */

export const STREAM_PATH = '/v1/telemetry/stream';
/** Subprotocol the server selects when offered (clients should offer it next to the ticket one). */
export const STREAM_SUBPROTOCOL = 'fleetgw.v1';
export const TICKET_SUBPROTOCOL_PREFIX = 'fleetgw.ticket.';

export const CLOSE = {
  /** Server shutting down. */
  goingAway: 1001,
  /** Malformed message, unknown op, unsupported encoding. */
  badRequest: 4400,
  /** Ticket missing, invalid, already used or expired, or its API key was revoked or expired. */
  invalidTicket: 4401,
  /** The API key that issued this socket's ticket was revoked or expired while the socket was open. */
  keyRevoked: 4403,
  /** No valid subscribe message within the subscribe timeout. */
  subscribeTimeout: 4408,
  /** The ticket's API key or organization already holds its bound of open streams. */
  tooManyStreams: 4429,
} as const;

export const MAX_ROBOT_IDS = 1_000;
/**
 * Largest client message accepted; a larger one is refused with 4400 and a reason naming the limit.
 * Sized so that a subscribe naming {@link MAX_ROBOT_IDS} robot ids as the gateway assigns them (UUIDs,
 * 39 bytes each quoted with a comma: ~39 KB) fits with room for a ticket and pretty-printing.
 */
export const MAX_CLIENT_MESSAGE_BYTES = 64 * 1024;
/**
 * uWS's own limit (`maxPayloadLength`). uWS drops a connection above it without a close frame (the
 * client sees 1006), so it sits above {@link MAX_CLIENT_MESSAGE_BYTES}: messages between the two get
 * our 4400 with a reason. It stays a small multiple of the cap because uWS buffers a message that
 * spans TCP reads up to this size, per socket.
 */
export const MAX_CLIENT_FRAME_BYTES = 2 * MAX_CLIENT_MESSAGE_BYTES;
/** RFC 6455: a close frame's reason is at most 123 bytes of UTF-8. */
const MAX_CLOSE_REASON_BYTES = 123;
const MAX_ID_LENGTH = 128;

/** `json`: one text message per sample; `binary`: one binary message per sample, its RowBinary row. */
export type StreamEncoding = 'json' | 'binary';

/**
 * Server-side decimation classes (Hz), highest first. A subscription's `max_hz` is rounded down to
 * one of them; each class is one set of topics per robot (stream-hub.ts), so a class costs nothing
 * until someone subscribes to it.
 */
export const RATE_CLASSES_HZ = [100, 50, 20, 10, 5, 2, 1] as const;
/** Largest `max_hz` accepted (above the top class it means the top class). */
const MAX_HZ_LIMIT = 1_000;

export interface SubscribeMessage {
  op: 'subscribe';
  ticket: string | null;
  /** null: every robot of the ticket's fleet. */
  robotIds: string[] | null;
  encoding: StreamEncoding;
  /** Per robot at most this many samples a second (a {@link RATE_CLASSES_HZ} value); null: every sample. */
  maxHz: number | null;
}

export type ParseResult = { ok: true; msg: SubscribeMessage } | { ok: false; code: 'bad_request'; message: string };

function bad(message: string): ParseResult {
  return { ok: false, code: 'bad_request', message };
}

/** Validates one client message. Unknown fields are rejected, like the REST API's strict bodies. */
export function parseClientMessage(data: ArrayBuffer): ParseResult {
  if (data.byteLength > MAX_CLIENT_MESSAGE_BYTES) {
    return bad(`message too large: ${data.byteLength} bytes, the limit is ${MAX_CLIENT_MESSAGE_BYTES}`);
  }
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return bad('message is not valid JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return bad('message must be a JSON object');
  const o = v as Record<string, unknown>;
  if (o.op !== 'subscribe') return bad('unknown op (expected "subscribe")');
  for (const k of Object.keys(o)) {
    if (k !== 'op' && k !== 'ticket' && k !== 'robot_ids' && k !== 'encoding' && k !== 'max_hz') return bad(`unknown field ${JSON.stringify(k).slice(0, 40)}`);
  }
  if (o.encoding !== undefined && o.encoding !== 'json' && o.encoding !== 'binary') return bad('unsupported encoding (expected "json" or "binary")');
  let maxHz: number | null = null;
  if (o.max_hz !== undefined && o.max_hz !== null) {
    if (typeof o.max_hz !== 'number' || !Number.isFinite(o.max_hz) || o.max_hz < 1 || o.max_hz > MAX_HZ_LIMIT) {
      return bad(`max_hz must be a number from 1 to ${MAX_HZ_LIMIT}`);
    }
    const wanted = o.max_hz;
    maxHz = RATE_CLASSES_HZ.find((hz) => hz <= wanted) ?? 1;
  }
  if (o.ticket !== undefined && typeof o.ticket !== 'string') return bad('ticket must be a string');
  let robotIds: string[] | null = null;
  if (o.robot_ids !== undefined && o.robot_ids !== null) {
    if (!Array.isArray(o.robot_ids) || o.robot_ids.length > MAX_ROBOT_IDS) {
      return bad(`robot_ids must be an array of at most ${MAX_ROBOT_IDS} strings`);
    }
    for (const id of o.robot_ids) {
      if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) return bad('robot_ids must hold non-empty strings');
    }
    robotIds = o.robot_ids as string[];
  }
  const encoding: StreamEncoding = o.encoding === 'binary' ? 'binary' : 'json';
  return { ok: true, msg: { op: 'subscribe', ticket: o.ticket ?? null, robotIds, encoding, maxHz } };
}

/** Server notice texts (small, rare: plain JSON.stringify). */
export const notice = {
  subscribed: (fleetId: string, robotIds: string[] | null, encoding: StreamEncoding = 'json', maxHz: number | null = null): string =>
    JSON.stringify({ op: 'subscribed', fleet_id: fleetId, robot_ids: robotIds, encoding, max_hz: maxHz }),
  dropped: (count: number): string => JSON.stringify({ op: 'dropped', count }),
  error: (code: string, message: string): string => JSON.stringify({ op: 'error', code, message }),
};

/** `text` cut to fit a close frame's reason (at most 123 bytes of UTF-8, never a split character). */
export function closeReason(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= MAX_CLOSE_REASON_BYTES) return text;
  let end = MAX_CLOSE_REASON_BYTES;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // back off to a character boundary
  return bytes.subarray(0, end).toString('utf8');
}
