/**
 * The Foxglove endpoint through real parts: ingest (piscina + chdb) -> decode workers' Foxglove frames
 * -> FoxgloveHub -> uWS route -> @foxglove/ws-protocol's FoxgloveClient over `ws` on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FoxgloveHub } from '../../src/telemetry/foxglove/foxglove-hub.js';
import { registerFoxgloveEndpoint, ticketFromQuery } from '../../src/telemetry/foxglove/foxglove-ws.js';
import type { TelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { createStreamHub, type StreamHub } from '../../src/telemetry/live/stream-hub.js';
import { TicketIssuer } from '../../src/telemetry/live/ticket-issuer.js';
import { connectFoxglove, schemaErrors } from '../support/foxglove-client.js';
import { foxgloveSchemaProblems } from '../support/foxglove-schema-subset.js';
import { encodeBatch, sample, tempDir, until } from './helpers.js';
import { startLiveRig, type LiveRig } from './live-rig.js';

describe('Foxglove WebSocket endpoint', () => {
  const tmp = tempDir('foxglove');
  let ingest: TelemetryIngest;
  let hub: StreamHub;
  let foxglove: FoxgloveHub;
  let rig: LiveRig;
  let base: string;
  let skewMs = 0;
  const tickets = new TicketIssuer({ now: () => Date.now() + skewMs });
  const scope = { orgId: 'org-a', fleetId: 'fleet-a', apiKeyId: 'key-a' };
  const url = (ticket?: string): string => `${base}${ticket === undefined ? '' : `?ticket=${ticket}`}`;

  beforeAll(async () => {
    hub = createStreamHub({ tickets, maxSocketsPerKey: 3 });
    foxglove = new FoxgloveHub({ hub, maxBufferedBytes: 64 * 1024 });
    rig = await startLiveRig(
      tmp.dir,
      { threads: 1, live: hub, foxglove, maxBatchAgeMs: 5 },
      (app) => registerFoxgloveEndpoint(app, { foxglove, tickets, maxBufferedBytes: 64 * 1024 }),
      () => hub.close(),
    );
    ingest = rig.ingest;
    base = `ws://127.0.0.1:${rig.port}/v1/telemetry/foxglove`;
    foxglove.robotOnline('r1', 'fleet-a');
    foxglove.robotOnline('r2', 'fleet-a');
    foxglove.robotOnline('rx', 'fleet-b'); // another fleet (another organization's): never advertised to fleet-a
  });

  afterAll(async () => {
    await rig.close();
    tmp.remove();
  });

  it('serverInfo, channels of the ticket fleet only, subscribed messages valid against their schemas, unsubscribe', async () => {
    const c = connectFoxglove(url(tickets.issue(scope).ticket));
    await c.opened;
    expect(c.ws.protocol).toBe('foxglove.websocket.v1');
    await until(() => c.serverInfo !== null && c.channels.size === 6, 5_000, 'serverInfo and advertise');
    expect(c.serverInfo).toMatchObject({ op: 'serverInfo', name: 'fleet-gateway', capabilities: [], supportedEncodings: ['json'], metadata: { fleetId: 'fleet-a' } });
    expect([...c.channels.values()].map((ch) => ch.topic).sort()).toEqual([
      '/robots/r1/location', '/robots/r1/pose', '/robots/r1/status', '/robots/r2/location', '/robots/r2/pose', '/robots/r2/status',
    ]);
    for (const ch of c.channels.values()) {
      expect(ch).toMatchObject({ encoding: 'json', schemaEncoding: 'jsonschema' });
      expect(foxgloveSchemaProblems(JSON.parse(ch.schema) as Record<string, unknown>), ch.topic).toEqual([]);
    }
    expect(c.channel('/robots/r1/location')!.schemaName).toBe('foxglove.LocationFix');
    expect(c.channel('/robots/r1/pose')!.schemaName).toBe('foxglove.PoseInFrame');
    expect(c.channel('/robots/r1/status')!.schemaName).toBe('fleetgw.RobotStatus');

    const loc = c.client.subscribe(c.channel('/robots/r1/location')!.id);
    const status = c.client.subscribe(c.channel('/robots/r1/status')!.id);
    const pose = c.client.subscribe(c.channel('/robots/r2/pose')!.id);
    await until(() => foxglove.anyWatched(), 5_000, 'subscribed');
    const t0 = Date.now();
    ingest.push('r1', 'fleet-a', encodeBatch(t0, 3));
    ingest.push('r2', 'fleet-a', encodeBatch(t0, 2));
    ingest.push('rx', 'fleet-b', encodeBatch(t0, 2)); // not visible
    await ingest.flush();
    await until(() => c.messages.length >= 3 + 3 + 2, 5_000, 'messages');
    // A later sample of r2 (pose only): a message the pushes above were not to send would have come before it.
    const later = BigInt(t0 + 60_000) * 1_000_000n;
    ingest.push('r2', 'fleet-a', encodeBatch(t0 + 60_000, 1));
    await ingest.flush();
    await until(() => c.messages.some((m) => m.timestamp === later), 10_000, 'the later message');
    expect(c.messages.map((m) => m.timestamp === later)).toEqual([...Array<boolean>(8).fill(false), true]);
    c.messages.pop();
    const bySub = (id: number) => c.messages.filter((m) => m.subscriptionId === id);
    expect(bySub(loc)).toHaveLength(3);
    expect(bySub(status)).toHaveLength(3);
    expect(bySub(pose)).toHaveLength(2);
    const channelOf = new Map([[loc, c.channel('/robots/r1/location')!], [status, c.channel('/robots/r1/status')!], [pose, c.channel('/robots/r2/pose')!]]);
    for (const m of c.messages) expect(schemaErrors(channelOf.get(m.subscriptionId)!, m.payload), JSON.stringify(m.payload)).toEqual([]);
    // Timestamps in ns (frame) and sec/nsec (payload) are the sample's time; messages of a robot in order.
    expect(bySub(loc).map((m) => m.timestamp)).toEqual([0, 1, 2].map((i) => BigInt(t0 + i * 10) * 1_000_000n));
    const first = sample(t0, 0);
    expect(bySub(loc)[0]!.payload).toMatchObject({
      timestamp: { sec: Math.floor(t0 / 1000), nsec: (t0 % 1000) * 1_000_000 }, frame_id: 'r1',
      latitude: first.position!.latitude, longitude: first.position!.longitude, altitude: first.position!.elevationM,
    });
    expect(bySub(status)[1]!.payload).toMatchObject({
      robot_id: 'r1', fleet_id: 'fleet-a', battery: { percent: 80, charging: false }, mode: 'autonomous', estop: false, gps_fix: 4,
      health: { level: 'warn', faults: ['motor_overtemp'] }, mission: { run_id: 'run-1', mission_state: 'running', current_step_index: 1 },
    });
    const p1 = bySub(pose)[1]!.payload as { pose: { position: Record<string, number>; orientation: Record<string, number> }; frame_id: string };
    expect(p1.frame_id).toBe('depot');
    expect(p1.pose.position).toEqual({ x: 1, y: 2, z: 0.5 });
    // heading 7 deg clockwise from north = yaw 83 deg counter-clockwise from east (x).
    expect(2 * Math.atan2(p1.pose.orientation.z!, p1.pose.orientation.w!) * (180 / Math.PI)).toBeCloseTo(83, 6);

    c.client.unsubscribe(loc);
    c.client.unsubscribe(status);
    c.client.unsubscribe(pose);
    await until(() => !foxglove.anyWatched(), 5_000, 'unsubscribed');
    const before = c.messages.length;
    ingest.push('r1', 'fleet-a', encodeBatch(t0 + 1000, 3));
    await ingest.flush();
    // A new subscription's first message, from a later push: anything for the old ones came before it.
    const probe = c.client.subscribe(c.channel('/robots/r2/status')!.id);
    await until(() => foxglove.anyWatched(), 5_000, 'subscribed again');
    ingest.push('r2', 'fleet-a', encodeBatch(t0 + 2000, 1));
    await ingest.flush();
    await until(() => c.messages.some((m) => m.subscriptionId === probe), 10_000, 'the new subscription\'s message');
    expect(c.messages.slice(before).map((m) => m.subscriptionId)).toEqual([probe]);
    c.ws.close();
  });

  it('two sockets on one channel each get their own subscription id', async () => {
    const a = connectFoxglove(url(tickets.issue(scope).ticket));
    const b = connectFoxglove(url(tickets.issue(scope).ticket));
    await until(() => a.channels.size === 6 && b.channels.size === 6, 5_000, 'advertise');
    b.client.subscribe(b.channel('/robots/r2/pose')!.id); // b's ids start at 0 too: move it on
    const subA = a.client.subscribe(a.channel('/robots/r1/status')!.id);
    const subB = b.client.subscribe(b.channel('/robots/r1/status')!.id);
    expect(subA).not.toBe(subB);
    await until(() => foxglove.watchedKinds('r1') === 4, 5_000, 'subscribed');
    ingest.push('r1', 'fleet-a', encodeBatch(Date.now(), 20));
    await ingest.flush();
    await until(() => a.messages.length >= 20 && b.messages.length >= 20, 5_000, 'messages on both');
    expect(a.messages.every((m) => m.subscriptionId === subA)).toBe(true);
    expect(b.messages.every((m) => m.subscriptionId === subB)).toBe(true);
    expect(a.messages.map((m) => m.payload)).toEqual(b.messages.map((m) => m.payload));
    a.ws.close();
    b.ws.close();
    await until(() => !foxglove.anyWatched(), 5_000, 'unsubscribed on close');
  });

  it('a subscribe to a channel of another fleet is refused with an error status', async () => {
    const other = connectFoxglove(url(tickets.issue({ ...scope, fleetId: 'fleet-b' }).ticket));
    await until(() => other.channels.size === 3, 5_000, 'fleet-b channels');
    const rxChannel = other.channel('/robots/rx/location')!.id;
    other.ws.close();
    const c = connectFoxglove(url(tickets.issue(scope).ticket));
    await until(() => c.channels.size === 6, 5_000, 'advertise');
    expect(c.channels.has(rxChannel)).toBe(false);
    c.client.subscribe(rxChannel);
    await until(() => c.statuses.length === 1, 5_000, 'status');
    expect(c.statuses[0]).toMatchObject({ level: 2, message: `channel ${rxChannel} is not advertised to this connection` });
    expect(foxglove.anyWatched()).toBe(false);
    c.ws.close();
  });

  it('advertises a robot that comes online and unadvertises it when it goes offline', async () => {
    const c = connectFoxglove(url(tickets.issue(scope).ticket));
    await until(() => c.channels.size === 6, 5_000, 'advertise');
    foxglove.robotOnline('r3', 'fleet-a');
    foxglove.robotOnline('ry', 'fleet-b');
    await until(() => c.channels.size === 9, 5_000, 'r3 advertised');
    const ids = [...c.channels.values()].filter((ch) => ch.topic.startsWith('/robots/r3/')).map((ch) => ch.id);
    foxglove.robotOffline('r3');
    await until(() => c.channels.size === 6, 5_000, 'r3 unadvertised');
    expect(c.unadvertised.sort()).toEqual(ids.sort());
    expect(c.channel('/robots/ry/location')).toBeUndefined();
    c.ws.close();
  });

  it('refuses the upgrade without a ticket, with a used or expired one, and without the subprotocol', async () => {
    const none = connectFoxglove(url());
    await expect(none.opened).rejects.toThrow();
    expect(none.refusedStatus).toBe(401);

    const t = tickets.issue(scope).ticket;
    const ok = connectFoxglove(url(t));
    await ok.opened;
    const reused = connectFoxglove(url(t));
    await expect(reused.opened).rejects.toThrow();
    expect(reused.refusedStatus).toBe(401);
    ok.ws.close();

    const old = tickets.issue(scope).ticket;
    skewMs = 31_000;
    try {
      const expired = connectFoxglove(url(old));
      await expect(expired.opened).rejects.toThrow();
      expect(expired.refusedStatus).toBe(401);
    } finally {
      skewMs = 0;
    }

    const noProto = connectFoxglove(url(tickets.issue(scope).ticket), []);
    await expect(noProto.opened).rejects.toThrow();
    expect(noProto.refusedStatus).toBe(400);
  });

  it('counts against the stream bounds per key and closes with 4403 when the key is revoked', async () => {
    const clients = [0, 1, 2].map(() => connectFoxglove(url(tickets.issue(scope).ticket)));
    await Promise.all(clients.map((c) => c.opened));
    const fourth = connectFoxglove(url(tickets.issue(scope).ticket));
    await until(() => fourth.closed !== null, 5_000, 'fourth closed');
    expect(fourth.closed!.code).toBe(4429);
    expect(fourth.statuses[0]).toMatchObject({ level: 2 });
    const other = connectFoxglove(url(tickets.issue({ ...scope, apiKeyId: 'key-b' }).ticket));
    await other.opened;
    expect(hub.closeKey('key-a')).toBe(3);
    await until(() => clients.every((c) => c.closed !== null), 5_000, 'revoked closed');
    for (const c of clients) expect(c.closed!.code).toBe(4403);
    expect(other.closed).toBeNull();
    other.ws.close();
  });

  it('answers a bad client message with an error status and keeps the connection', async () => {
    const c = connectFoxglove(url(tickets.issue(scope).ticket));
    await until(() => c.channels.size >= 6, 5_000, 'advertise');
    const ch = c.channel('/robots/r1/status')!.id;
    c.ws.send(JSON.stringify({ op: 'subscribe', subscriptions: [{ id: 7, channelId: ch }, { id: 7, channelId: c.channel('/robots/r1/pose')!.id }] }));
    c.ws.send(JSON.stringify({ op: 'advertise', channels: [] }));
    c.ws.send('{not json');
    c.ws.send(Uint8Array.of(1, 0, 0, 0, 0));
    await until(() => c.statuses.length === 4, 5_000, 'four error statuses');
    expect(c.statuses.map((st) => st.message)).toEqual([
      'subscription id 7 is already in use',
      'unsupported op "advertise": this server serves subscribe and unsubscribe',
      'message is not valid JSON',
      'client publishing is not supported by this server',
    ]);
    expect(c.closed).toBeNull();
    expect(foxglove.watchedKinds('r1')).toBe(4); // the first subscription stands
    c.ws.close();
    await until(() => !foxglove.anyWatched(), 5_000, 'closed socket unsubscribed');
  });

  it('drops messages for a slow consumer and tells it how many once it drains', async () => {
    foxglove.robotOnline('slow', 'fleet-a');
    const c = connectFoxglove(url(tickets.issue(scope).ticket));
    await until(() => c.channel('/robots/slow/status') !== undefined, 5_000, 'advertise');
    const sub = c.client.subscribe(c.channel('/robots/slow/status')!.id);
    await until(() => foxglove.anyWatched(), 5_000, 'subscribed');
    // Stop reading: the kernel buffers fill, then uWS's send buffer passes the 64 KiB bound.
    const sock = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    sock.pause();
    const total = 20_000;
    for (let i = 0; i < total / 100; i++) ingest.push('slow', 'fleet-a', encodeBatch(Date.now() + i * 1_000, 100));
    await ingest.flush();
    expect(foxglove.droppedTotal).toBeGreaterThan(0);
    sock.resume();
    const droppedCount = (): number => c.statuses.reduce((n, st) => n + (st.id === 'fleetgw.dropped' ? Number(/^(\d+) /.exec(st.message)![1]) : 0), 0);
    await until(() => droppedCount() > 0, 10_000, 'dropped status');
    await until(() => c.messages.length + droppedCount() >= total, 10_000, 'all accounted');
    expect(c.messages.length + droppedCount()).toBe(total);
    expect(c.messages.every((m) => m.subscriptionId === sub)).toBe(true);
    expect(droppedCount()).toBe(foxglove.droppedTotal);
    c.ws.close();
  });

  it('reads the ticket from the query string', () => {
    expect(ticketFromQuery('ticket=abc')).toBe('abc');
    expect(ticketFromQuery('x=1&ticket=abc&ticket=def')).toBe('abc');
    expect(ticketFromQuery('ticket=')).toBeNull();
    expect(ticketFromQuery('')).toBeNull();
  });
});
