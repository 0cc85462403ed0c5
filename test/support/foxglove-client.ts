/**
 * A Foxglove WebSocket client for tests: @foxglove/ws-protocol's own FoxgloveClient over the `ws`
 * package (subprotocol foxglove.websocket.v1), recording what the server says, and an ajv check of
 * a message payload against the JSON Schema its channel advertised.
 */
import { Ajv } from 'ajv';
import { FoxgloveClient, type Channel, type MessageData, type ServerInfo, type StatusMessage } from '@foxglove/ws-protocol';
import WebSocket from 'ws';

export interface RecordedMessage {
  subscriptionId: number;
  timestamp: bigint;
  payload: Record<string, unknown>;
}

export interface FoxgloveTestClient {
  client: FoxgloveClient;
  ws: WebSocket;
  serverInfo: ServerInfo | null;
  /** Advertised and not unadvertised, by id. */
  channels: Map<number, Channel>;
  unadvertised: number[];
  messages: RecordedMessage[];
  statuses: StatusMessage[];
  /** The HTTP status of a refused upgrade (`ws` reports "Unexpected server response: N"). */
  refusedStatus: number | null;
  /** Set once the socket closed: code, reason text and Date.now() at the close event. */
  closed: { code: number; reason: string; atMs: number } | null;
  opened: Promise<void>;
  /** Channel of `topic`, or undefined. */
  channel(topic: string): Channel | undefined;
}

/** Connects to `url` with FoxgloveClient and records everything. */
export function connectFoxglove(url: string, protocols: string[] = [FoxgloveClient.SUPPORTED_SUBPROTOCOL]): FoxgloveTestClient {
  const ws = new WebSocket(url, protocols);
  const client = new FoxgloveClient({ ws });
  const decoder = new TextDecoder();
  const c: FoxgloveTestClient = {
    client,
    ws,
    serverInfo: null,
    channels: new Map(),
    unadvertised: [],
    messages: [],
    statuses: [],
    refusedStatus: null,
    closed: null,
    opened: new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    }),
    channel: (topic) => [...c.channels.values()].find((ch) => ch.topic === topic),
  };
  ws.on('error', (e: Error) => {
    const m = /Unexpected server response: (\d+)/.exec(e.message);
    if (m) c.refusedStatus = Number(m[1]);
  });
  client.on('serverInfo', (info) => (c.serverInfo = info));
  client.on('advertise', (channels) => {
    for (const ch of channels) c.channels.set(ch.id, ch);
  });
  client.on('unadvertise', (ids) => {
    for (const id of ids) c.channels.delete(id);
    c.unadvertised.push(...ids);
  });
  client.on('status', (s) => c.statuses.push(s));
  client.on('message', (m: MessageData) => {
    c.messages.push({ subscriptionId: m.subscriptionId, timestamp: m.timestamp, payload: JSON.parse(decoder.decode(new Uint8Array(m.data.buffer, m.data.byteOffset, m.data.byteLength))) as Record<string, unknown> });
  });
  client.on('error', () => {});
  ws.on('close', (code: number, reason: Buffer) => (c.closed = { code, reason: reason.toString('utf8'), atMs: Date.now() }));
  return c;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = new Map<string, ReturnType<Ajv['compile']>>();

/** The errors of `payload` against `channel`'s advertised JSON Schema (empty when valid). */
export function schemaErrors(channel: Channel, payload: unknown): string[] {
  let v = validators.get(channel.schema);
  if (v === undefined) validators.set(channel.schema, (v = ajv.compile(JSON.parse(channel.schema) as object)));
  return v(payload) ? [] : (v.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
