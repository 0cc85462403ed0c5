/**
 * The live stream through real parts: ingest (piscina + chdb) -> hub -> uWS WebSocket route -> `ws`
 * client on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { TelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { createStreamHub, type StreamHub } from '../../src/telemetry/live/stream-hub.js';
import { registerTelemetryStream } from '../../src/telemetry/live/stream-ws.js';
import { TicketIssuer } from '../../src/telemetry/live/ticket-issuer.js';
import { encodeBatch, tempDir, until } from './helpers.js';
import { startLiveRig, type LiveRig } from './live-rig.js';

type Msg = Record<string, unknown> & { op: string };

/** A client that records every message and the close code. */
function connect(url: string, protocols: string[] = []) {
  const ws = new WebSocket(url, protocols);
  const messages: Msg[] = [];
  const state = { closeCode: 0, opened: false };
  ws.on('message', (d: Buffer) => messages.push(JSON.parse(d.toString()) as Msg));
  ws.on('open', () => (state.opened = true));
  ws.on('close', (code) => (state.closeCode = code));
  ws.on('error', () => {});
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, messages, state, opened, of: (op: string) => messages.filter((m) => m.op === op) };
}

describe('telemetry WebSocket stream', () => {
  const tmp = tempDir('stream');
  let ingest: TelemetryIngest;
  let hub: StreamHub;
  let rig: LiveRig;
  let url: string;
  // A test clock: lets a ticket expire without waiting a minute.
  let skewMs = 0;
  const tickets = new TicketIssuer({ now: () => Date.now() + skewMs });
  const scope = { orgId: 'org-1', fleetId: 'fleet-live', apiKeyId: 'k' };

  beforeAll(async () => {
    hub = createStreamHub({ tickets, subscribeTimeoutMs: 300, maxBufferedBytes: 64 * 1024 });
    rig = await startLiveRig(tmp.dir, { threads: 1, live: hub, maxBatchAgeMs: 5 }, (app) => registerTelemetryStream(app, hub), () => hub.close());
    ingest = rig.ingest;
    url = `ws://127.0.0.1:${rig.port}/v1/telemetry/stream`;
  });

  afterAll(async () => {
    await rig.close();
    tmp.remove();
  });

  it('delivers one JSON message per sample of the ticket fleet, filtered by robot_ids', async () => {
    const c = connect(url);
    await c.opened;
    c.ws.send(JSON.stringify({ op: 'subscribe', ticket: tickets.issue(scope).ticket, robot_ids: ['r1', 'r3'], encoding: 'json' }));
    await until(() => c.of('subscribed').length === 1, 5_000, 'subscribed');
    expect(c.of('subscribed')[0]).toMatchObject({ fleet_id: 'fleet-live', robot_ids: ['r1', 'r3'] });
    const t0 = Date.now();
    ingest.push('r1', 'fleet-live', encodeBatch(t0, 3));
    ingest.push('r2', 'fleet-live', encodeBatch(t0, 3)); // filtered out by robot_ids
    ingest.push('r3', 'other-fleet', encodeBatch(t0, 3)); // other fleet: never visible with this ticket
    ingest.push('r3', 'fleet-live', encodeBatch(t0 + 100, 2));
    await ingest.flush();
    // A later sample on the same socket: whatever the pushes above were to show has arrived before it.
    ingest.push('r1', 'fleet-live', encodeBatch(t0 + 10_000, 1));
    await ingest.flush();
    await until(() => c.of('sample').some((s) => Number(s.ts_ms) === t0 + 10_000), 10_000, 'the later sample');
    const samples = c.of('sample');
    expect(samples.map((s) => `${String(s.robot_id)}@${Number(s.ts_ms) - t0}`)).toEqual(['r1@0', 'r1@10', 'r1@20', 'r3@100', 'r3@110', 'r1@10000']);
    expect(samples[0]).toMatchObject({ fleet_id: 'fleet-live', gps_fix: 4, mode: 'autonomous', battery: { percent: 80 } });
    expect(samples[0]!.pose).toMatchObject({ x_m: 0, y_m: 0 });
    c.ws.close();
  });

  it('accepts the ticket as a subprotocol, without it in any message', async () => {
    const c = connect(url, ['fleetgw.v1', `fleetgw.ticket.${tickets.issue(scope).ticket}`]);
    await c.opened;
    expect(c.ws.protocol).toBe('fleetgw.v1');
    c.ws.send(JSON.stringify({ op: 'subscribe' }));
    await until(() => c.of('subscribed').length === 1, 5_000, 'subscribed');
    ingest.push('r9', 'fleet-live', encodeBatch(Date.now(), 1));
    await until(() => c.of('sample').length === 1, 5_000, 'sample');
    expect(c.of('sample')[0]!.robot_id).toBe('r9');
    c.ws.close();
  });

  it('closes with 4401 for a used, an unknown or an expired ticket', async () => {
    const used = tickets.issue(scope).ticket;
    expect(tickets.redeem(used)).not.toBeNull();
    const expired = tickets.issue(scope).ticket;
    skewMs = 60_001;
    try {
      for (const send of [{ op: 'subscribe', ticket: used }, { op: 'subscribe', ticket: 'x'.repeat(43) }, { op: 'subscribe' }, { op: 'subscribe', ticket: expired }]) {
        const c = connect(url);
        await c.opened;
        c.ws.send(JSON.stringify(send));
        await until(() => c.state.closeCode !== 0, 5_000, 'close');
        expect(c.state.closeCode).toBe(4401);
        expect(c.of('error')[0]).toMatchObject({ code: 'invalid_ticket' });
      }
    } finally {
      skewMs = 0;
    }
    // Subprotocol path: the second socket presenting the same ticket is refused.
    const t = tickets.issue(scope).ticket;
    const first = connect(url, ['fleetgw.v1', `fleetgw.ticket.${t}`]);
    await first.opened;
    const second = connect(url, ['fleetgw.v1', `fleetgw.ticket.${t}`]);
    await second.opened;
    await until(() => second.state.closeCode !== 0, 5_000, 'close');
    expect(second.state.closeCode).toBe(4401);
    expect(second.of('error')[0]).toMatchObject({ code: 'invalid_ticket' });
    first.ws.close();
  });

  it('closes a socket that never subscribes (4408) and rejects malformed messages (4400)', async () => {
    const idle = connect(url);
    await idle.opened;
    await until(() => idle.state.closeCode !== 0, 5_000, 'idle close');
    expect(idle.state.closeCode).toBe(4408);
    const bad = connect(url);
    await bad.opened;
    bad.ws.send(JSON.stringify({ op: 'subscribe', ticket: tickets.issue(scope).ticket, encoding: 'msgpack' }));
    await until(() => bad.state.closeCode !== 0, 5_000, 'bad close');
    expect(bad.state.closeCode).toBe(4400);
  });

  it('drops samples for a slow consumer and tells it how many once it drains', async () => {
    const c = connect(url);
    await c.opened;
    c.ws.send(JSON.stringify({ op: 'subscribe', ticket: tickets.issue(scope).ticket, robot_ids: ['slow'] }));
    await until(() => c.of('subscribed').length === 1, 5_000, 'subscribed');
    // Stop reading: the kernel buffers fill, then uWS's send buffer passes the hub's 64 KiB bound.
    const sock = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    sock.pause();
    const total = 20_000;
    for (let i = 0; i < total / 100; i++) ingest.push('slow', 'fleet-live', encodeBatch(Date.now() + i * 1_000, 100));
    await ingest.flush();
    expect(hub.droppedTotal).toBeGreaterThan(0);
    sock.resume();
    await until(() => c.of('dropped').length > 0, 10_000, 'dropped notice');
    await until(() => c.of('sample').length + c.of('dropped').reduce((n, m) => n + Number(m.count), 0) >= total, 10_000, 'all accounted');
    const dropped = c.of('dropped').reduce((n, m) => n + Number(m.count), 0);
    expect(c.of('sample').length + dropped).toBe(total);
    expect(dropped).toBe(hub.droppedTotal);
    c.ws.close();
  });

  it('counts what a socket that stops reading misses across event-loop turns, exactly, while it is still stuck', async () => {
    const before = hub.droppedTotal;
    const c = connect(url);
    await c.opened;
    c.ws.send(JSON.stringify({ op: 'subscribe', ticket: tickets.issue(scope).ticket, robot_ids: ['stuck'] }));
    await until(() => c.of('subscribed').length === 1, 5_000, 'subscribed');
    const sock = (c.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    sock.pause();
    // ~7 MB over many turns: past the kernel's buffers, then the 64 KiB bound, measured by the sweep.
    const total = 10_000;
    for (let i = 0; i < total / 100; i++) {
      ingest.push('stuck', 'fleet-live', encodeBatch(Date.now() + i * 1_000, 100));
      // Pacing on purpose: the pushes spread over many event-loop turns.
      await new Promise((r) => setTimeout(r, 2));
    }
    // Still stuck: its misses already show in the gateway's counter (/metrics), before any notice.
    await until(() => hub.droppedTotal - before > 0, 10_000, 'the stuck socket\'s misses counted');
    sock.resume();
    await until(() => c.of('sample').length + c.of('dropped').reduce((n, m) => n + Number(m.count), 0) >= total, 15_000, 'all accounted');
    const dropped = c.of('dropped').reduce((n, m) => n + Number(m.count), 0);
    expect(c.of('sample').length + dropped).toBe(total);
    expect(hub.droppedTotal - before).toBe(dropped);
    c.ws.close();
  });
});
