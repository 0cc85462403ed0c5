/**
 * Live fan-out through real parts (ingest -> hub -> uWS topics -> `ws` client on 127.0.0.1): the
 * subscription options (`encoding: "binary"`, `max_hz`), topic isolation between fleets, and the same
 * options for peers without native topics (the hub's transport-agnostic path).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { readRowValues } from '../../src/telemetry/sample/row-rowbinary.js';
import type { TelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { createStreamHub, StreamHub, type StreamHub as Hub, type StreamPeer } from '../../src/telemetry/live/stream-hub.js';
import { parseClientMessage } from '../../src/telemetry/live/stream-protocol.js';
import { registerTelemetryStream } from '../../src/telemetry/live/stream-ws.js';
import { TicketIssuer } from '../../src/telemetry/live/ticket-issuer.js';
import type { LiveBatch } from '../../src/telemetry/decode/worker-protocol.js';
import { encodeBatch, encodeSamples, sample, tempDir, until } from './helpers.js';
import { startLiveRig, type LiveRig } from './live-rig.js';

type Msg = Record<string, unknown> & { op: string };

function connect(url: string, protocols: string[]) {
  const ws = new WebSocket(url, protocols);
  const text: Msg[] = [];
  const binary: Buffer[] = [];
  const state = { closeCode: 0 };
  ws.on('message', (d: Buffer, isBinary: boolean) => {
    if (isBinary) binary.push(Buffer.from(d));
    else text.push(JSON.parse(d.toString()) as Msg);
  });
  ws.on('close', (code) => (state.closeCode = code));
  ws.on('error', () => {});
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, text, binary, state, opened, of: (op: string) => text.filter((m) => m.op === op) };
}

const enc = (o: unknown): ArrayBuffer => new TextEncoder().encode(JSON.stringify(o)).buffer;

describe('live fan-out options over uWS topics', () => {
  const tmp = tempDir('fanout');
  let ingest: TelemetryIngest;
  let hub: Hub;
  let rig: LiveRig;
  let url: string;
  const tickets = new TicketIssuer();
  const scope = (fleetId: string) => ({ orgId: 'org-1', fleetId, apiKeyId: `k-${fleetId}` });

  async function subscriber(fleetId: string, sub: Record<string, unknown>) {
    const c = connect(url, ['fleetgw.v1', `fleetgw.ticket.${tickets.issue(scope(fleetId)).ticket}`]);
    await c.opened;
    c.ws.send(JSON.stringify({ op: 'subscribe', ...sub }));
    await until(() => c.of('subscribed').length === 1, 5_000, 'subscribed');
    return c;
  }

  beforeAll(async () => {
    hub = createStreamHub({ tickets, subscribeTimeoutMs: 2_000 });
    rig = await startLiveRig(tmp.dir, { threads: 1, live: hub }, (app) => registerTelemetryStream(app, hub), () => hub.close());
    ingest = rig.ingest;
    url = `ws://127.0.0.1:${rig.port}/v1/telemetry/stream`;
  });

  afterAll(async () => {
    await rig.close();
    tmp.remove();
  });

  it('sends each sample as its RowBinary row to binary subscribers, the same values as the JSON message', async () => {
    const json = await subscriber('fleet-bin', { robot_ids: ['rb'] });
    const bin = await subscriber('fleet-bin', { robot_ids: ['rb'], encoding: 'binary' });
    expect(bin.of('subscribed')[0]).toEqual({ op: 'subscribed', fleet_id: 'fleet-bin', robot_ids: ['rb'], encoding: 'binary', max_hz: null });
    const t0 = 1_767_225_600_000;
    ingest.push('rb', 'fleet-bin', encodeBatch(t0, 3));
    await until(() => bin.binary.length === 3 && json.of('sample').length === 3, 5_000, 'samples');
    expect(bin.text.filter((m) => m.op === 'sample')).toEqual([]);
    const rows = bin.binary.map((b) => readRowValues(new Uint8Array(b)));
    const samples = json.of('sample');
    for (let i = 0; i < 3; i++) {
      expect(rows[i]!.robot_id).toBe('rb');
      expect(rows[i]!.fleet_id).toBe('fleet-bin');
      expect(Number(rows[i]!.ts_ms)).toBe(t0 + i * 10);
      expect(Number(rows[i]!.ts_ms)).toBe(samples[i]!.ts_ms);
      expect(Number(rows[i]!.received_at_ms)).toBe(samples[i]!.received_at_ms);
      expect(rows[i]!.lat).toBe(samples[i]!.latitude);
      expect(rows[i]!.faults).toEqual((samples[i]!.health as { faults: string[] }).faults);
    }
    json.ws.close();
    bin.ws.close();
  });

  it('decimates per robot by its clock: max_hz is rounded down to a rate class, timer jitter costs nothing', async () => {
    const full = await subscriber('fleet-hz', {});
    const one = await subscriber('fleet-hz', { max_hz: 1 });
    const three = await subscriber('fleet-hz', { max_hz: 3, robot_ids: ['h1'] });
    const ten = await subscriber('fleet-hz', { max_hz: 10, encoding: 'binary' });
    expect(three.of('subscribed')[0]!.max_hz).toBe(2);
    const t0 = 1_767_225_600_000;
    // 10 Hz for 3 s of robot clock, one sample per message, with +-9 ms of timer jitter.
    for (let i = 0; i < 30; i++) {
      const jitter = i === 0 ? 0 : i % 2 === 0 ? 9 : -9;
      for (const r of ['h1', 'h2']) ingest.push(r, 'fleet-hz', encodeSamples([sample(t0 + i * 100 + jitter, i)]));
    }
    await until(() => full.of('sample').length === 60, 5_000, 'all samples');
    await until(() => ten.binary.length === 60, 5_000, '10 Hz class');
    await until(() => one.of('sample').length === 6 && three.of('sample').length === 6, 5_000, '1 and 2 Hz classes');
    const tsOf = (c: ReturnType<typeof connect>, r: string) => c.of('sample').filter((m) => m.robot_id === r).map((m) => Number(m.ts_ms) - t0);
    // Odd samples are 9 ms early, even ones 9 ms late: each class takes the one nearest its grid.
    expect(tsOf(one, 'h1')).toEqual([0, 1009, 2009]);
    expect(tsOf(one, 'h2')).toEqual([0, 1009, 2009]);
    expect(tsOf(three, 'h1')).toEqual([0, 491, 1009, 1491, 2009, 2491]);
    expect(three.of('sample').every((m) => m.robot_id === 'h1')).toBe(true);
    for (const c of [full, one, three, ten]) c.ws.close();
  });

  it('keeps fleets apart even when ids contain the topic separator', async () => {
    // A naive "fleet|robot" topic would make fleet "x|y" robot "z" and fleet "x" robot "y|z" the same.
    const a = await subscriber('x|y', { robot_ids: ['z'] });
    const b = await subscriber('x', {});
    ingest.push('y|z', 'x', encodeBatch(Date.now(), 2));
    ingest.push('z', 'x|y', encodeBatch(Date.now(), 1));
    await until(() => b.of('sample').length === 2 && a.of('sample').length === 1, 5_000, 'samples');
    // A later sample for each subscriber: a wrong delivery of the pushes above would have come before it.
    ingest.push('z', 'x|y', encodeBatch(Date.now() + 60_000, 1));
    ingest.push('other', 'x', encodeBatch(Date.now() + 60_000, 1));
    await until(() => b.of('sample').length >= 3 && a.of('sample').length >= 2, 10_000, 'the later samples');
    expect(a.of('sample').map((m) => m.robot_id)).toEqual(['z', 'z']);
    expect(b.of('sample').map((m) => m.robot_id)).toEqual(['y|z', 'y|z', 'other']);
    a.ws.close();
    b.ws.close();
  });

  it('re-subscribing switches encoding and rate on the same socket; a refused ticket never gets a topic', async () => {
    const c = await subscriber('fleet-re', {});
    c.ws.send(JSON.stringify({ op: 'subscribe', encoding: 'binary', max_hz: 100 }));
    await until(() => c.of('subscribed').length === 2, 5_000, 'second subscribed');
    expect(c.of('subscribed')[1]).toMatchObject({ encoding: 'binary', max_hz: 100 });
    ingest.push('r', 'fleet-re', encodeBatch(Date.now(), 1));
    await until(() => c.binary.length === 1, 5_000, 'binary sample');
    expect(c.of('sample')).toEqual([]);
    c.ws.close();
    await until(() => !hub.hasSubscribers('fleet-re'), 5_000, 'unsubscribed at close');
    const topics = hub.topicCount;
    const bad = connect(url, []);
    await bad.opened;
    bad.ws.send(JSON.stringify({ op: 'subscribe', ticket: 'not-a-ticket', max_hz: 1 }));
    await until(() => bad.state.closeCode !== 0, 5_000, 'refused');
    expect(bad.state.closeCode).toBe(4401);
    expect(hub.topicCount).toBe(topics);
  });
});

describe('subscribe message options', () => {
  const parse = (o: unknown) => parseClientMessage(enc(o));
  it('accepts encoding json|binary and max_hz 1..1000 (rounded down to a class), refuses the rest', () => {
    expect(parse({ op: 'subscribe', encoding: 'binary', max_hz: 7.5 })).toMatchObject({ ok: true, msg: { encoding: 'binary', maxHz: 5 } });
    expect(parse({ op: 'subscribe', max_hz: 1000 })).toMatchObject({ ok: true, msg: { encoding: 'json', maxHz: 100 } });
    expect(parse({ op: 'subscribe', max_hz: null })).toMatchObject({ ok: true, msg: { maxHz: null } });
    for (const bad of [0, 0.5, 1001, '10', true]) expect(parse({ op: 'subscribe', max_hz: bad }).ok).toBe(false);
    expect(parse({ op: 'subscribe', encoding: 'msgpack' }).ok).toBe(false);
  });
});

describe('hub fan-out to peers without native topics', () => {
  function peer(): StreamPeer & { sent: { msg: string | Uint8Array; binary: boolean }[]; buffered: number } {
    const p = {
      sent: [] as { msg: string | Uint8Array; binary: boolean }[],
      buffered: 0,
      send: (msg: string | Uint8Array, binary?: boolean) => void p.sent.push({ msg, binary: binary === true }),
      bufferedAmount: () => p.buffered,
      cork: (fn: () => void) => fn(),
      end: () => {},
    };
    return p;
  }
  /** A batch of one robot's samples with robot clocks `ts` (JSON "m<i>", rows one byte each). */
  function batch(robotId: string, fleetId: string, ts: number[]): LiveBatch {
    const data = new TextEncoder().encode(ts.map((_, i) => `m${i}`).join(''));
    const index = new Uint32Array(ts.flatMap((_, i) => [0, i * 2, i * 2 + 2]));
    const rows = Uint8Array.from(ts.map((_, i) => i));
    const rowSpans = new Uint32Array(ts.flatMap((_, i) => [i, i + 1]));
    return { data, index, robotIds: [robotId], fleetIds: [fleetId], rows, rowSpans, ts: Float64Array.from(ts) };
  }

  it('applies encoding, max_hz and the buffer bound per peer, counting what a slow one missed', () => {
    const tickets = new TicketIssuer();
    const hub = new StreamHub({ tickets, maxBufferedBytes: 100 });
    const open = (sub: Record<string, unknown>) => {
      const p = peer();
      hub.connect(p, null, false).onMessage(enc({ op: 'subscribe', ticket: tickets.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k' }).ticket, ...sub }));
      p.sent.length = 0;
      return p;
    };
    const all = open({});
    const bin = open({ encoding: 'binary', max_hz: 2 });
    const slow = open({ robot_ids: ['r1'] });
    slow.buffered = 100;
    hub.publish(batch('r1', 'f', [0, 100, 200, 300, 400, 500, 600]));
    expect(all.sent.map((s) => Buffer.from(s.msg).toString())).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    expect(all.sent.every((s) => !s.binary)).toBe(true);
    expect(bin.sent.map((s) => [...(s.msg as Uint8Array)])).toEqual([[0], [5]]);
    expect(bin.sent.every((s) => s.binary)).toBe(true);
    expect(slow.sent).toEqual([]);
    expect(hub.droppedTotal).toBe(7);
    slow.buffered = 0;
    hub.publish(batch('r1', 'f', [700]));
    expect(slow.sent.map((s) => Buffer.from(s.msg).toString())).toEqual(['{"op":"dropped","count":7}', 'm0']);
    hub.close();
  });
});
