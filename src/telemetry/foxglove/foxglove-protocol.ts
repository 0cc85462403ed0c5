/**
 * The Foxglove WebSocket protocol (`foxglove.websocket.v1`,
 * https://github.com/foxglove/ws-protocol/blob/main/docs/spec.md) as the gateway speaks it: the
 * client messages it accepts (subscribe, unsubscribe) and the server's JSON messages. The message
 * types and enums are @foxglove/ws-protocol's own; the package's server (FoxgloveServer) is written
 * for the `ws` socket API, and the gateway serves WebSockets with uWebSockets.js, so the few messages
 * are built here (the binary MESSAGE_DATA frame in foxglove-output.ts). Only types come from the package.
 */
import type { Advertise, Channel, ServerInfo, StatusLevel, StatusMessage, Subscribe, Unadvertise, Unsubscribe } from '@foxglove/ws-protocol';

export const FOXGLOVE_PATH = '/v1/telemetry/foxglove';
export const FOXGLOVE_SUBPROTOCOL = 'foxglove.websocket.v1';

/** Largest client message accepted; a subscribe to every channel of 1,000 robots is ~120 KB. */
export const MAX_FOXGLOVE_CLIENT_MESSAGE_BYTES = 256 * 1024;
/** Subscriptions one socket may hold: every channel of 1,000 robots. */
export const MAX_FOXGLOVE_SUBSCRIPTIONS = 3_000;

export type FoxgloveClientMessage = Subscribe | Unsubscribe;

export type FoxgloveParse = { ok: true; msg: FoxgloveClientMessage } | { ok: false; message: string };

const isId = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;

/**
 * Validates one text message from the client. Only `subscribe` and `unsubscribe` are served (the
 * server advertises no capability: no client publishing, parameters, services or assets).
 */
export function parseFoxgloveMessage(data: ArrayBuffer): FoxgloveParse {
  if (data.byteLength > MAX_FOXGLOVE_CLIENT_MESSAGE_BYTES) return { ok: false, message: `message too large: ${data.byteLength} bytes, the limit is ${MAX_FOXGLOVE_CLIENT_MESSAGE_BYTES}` };
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return { ok: false, message: 'message is not valid JSON' };
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { ok: false, message: 'message must be a JSON object' };
  const o = v as Record<string, unknown>;
  if (o.op === 'subscribe') {
    const subs = o.subscriptions;
    if (!Array.isArray(subs) || subs.length > MAX_FOXGLOVE_SUBSCRIPTIONS) return { ok: false, message: `subscriptions must be an array of at most ${MAX_FOXGLOVE_SUBSCRIPTIONS}` };
    const out: Subscribe['subscriptions'] = [];
    for (const s of subs as unknown[]) {
      const e = s as Record<string, unknown> | null;
      if (typeof e !== 'object' || e === null || !isId(e.id) || !isId(e.channelId)) return { ok: false, message: 'each subscription needs integer id and channelId' };
      out.push({ id: e.id, channelId: e.channelId });
    }
    return { ok: true, msg: { op: 'subscribe', subscriptions: out } };
  }
  if (o.op === 'unsubscribe') {
    const ids = o.subscriptionIds;
    if (!Array.isArray(ids) || ids.length > MAX_FOXGLOVE_SUBSCRIPTIONS || !ids.every(isId)) return { ok: false, message: 'subscriptionIds must be an array of integers' };
    return { ok: true, msg: { op: 'unsubscribe', subscriptionIds: ids } };
  }
  return { ok: false, message: `unsupported op ${JSON.stringify(typeof o.op === 'string' ? o.op.slice(0, 40) : o.op)}: this server serves subscribe and unsubscribe` };
}

/** Server message texts (rare control messages: plain JSON.stringify). */
export const foxgloveMessage = {
  serverInfo: (sessionId: string, fleetId: string): string =>
    JSON.stringify({ op: 'serverInfo', name: 'fleet-gateway', capabilities: [], supportedEncodings: ['json'], metadata: { fleetId }, sessionId } satisfies ServerInfo),
  advertise: (channels: Channel[]): string => JSON.stringify({ op: 'advertise', channels } satisfies Advertise),
  unadvertise: (channelIds: number[]): string => JSON.stringify({ op: 'unadvertise', channelIds } satisfies Unadvertise),
  status: (level: StatusLevel, message: string, id?: string): string =>
    JSON.stringify({ op: 'status', level, message, ...(id !== undefined ? { id } : {}) } satisfies StatusMessage),
};

/**
 * The protocol's status levels, typed by ws-protocol's own enum. Imported as a type only: the package's
 * entry point loads its client and server (and their dependencies) to reach the enum at run time.
 */
export const STATUS = { info: 0 as StatusLevel.INFO, warning: 1 as StatusLevel.WARNING, error: 2 as StatusLevel.ERROR } as const;
