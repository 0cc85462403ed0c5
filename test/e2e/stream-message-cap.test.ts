/**
 * Issue 8 item 15: the client message cap of the live stream agrees with the documented 1,000
 * robot_ids, and a message over the cap is refused with close 4400 and a readable reason (not an
 * abrupt 1006). Real `ws` client against `fleetgw serve`.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { openStream, requestTicket, type StreamClient } from '../support/stream-client.js';
import { until } from '../support/until.js';

const CAP = 64 * 1024;

describe('live stream client message cap', () => {
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;

  beforeAll(async () => {
    d = makeDataDir('fleetgw-cap-');
    gw = await startGatewayProcess(d.dataDir);
  });

  afterAll(async () => {
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  const socket = async (): Promise<{ c: StreamClient; ticket: string }> => {
    const t = await requestTicket(gw.ready.http, d.apiKey, d.orgId, d.fleetId);
    expect(t.status).toBe(201);
    const c = openStream(t.body.url as string);
    await c.opened;
    return { c, ticket: t.body.ticket as string };
  };

  it('accepts a subscribe naming 1,000 robot ids (UUIDs), even pretty-printed', async () => {
    const ids = Array.from({ length: 1_000 }, () => randomUUID());
    const { c, ticket } = await socket();
    const text = JSON.stringify({ op: 'subscribe', ticket, robot_ids: ids, encoding: 'json' }, null, 2);
    expect(Buffer.byteLength(text)).toBeGreaterThan(16 * 1024); // over the former cap
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(CAP);
    c.send(text);
    await until(() => c.of('subscribed').length === 1 || c.closed !== null, 5_000, 'subscribed');
    expect(c.closed).toBeNull();
    expect(c.of('subscribed')[0]!.robot_ids).toEqual(ids);
    // A re-subscribe of the same size on the open socket is accepted too.
    c.send({ op: 'subscribe', robot_ids: ids.slice().reverse() });
    await until(() => c.of('subscribed').length === 2 || c.closed !== null, 5_000, 'resubscribed');
    expect(c.closed).toBeNull();
    c.ws.close();
  });

  it.each([
    ['just over the cap', CAP + 1],
    ['well over the cap', 100 * 1024],
  ])('closes with 4400 and a reason naming the limit for a message %s', async (_label, size) => {
    const { c, ticket } = await socket();
    // A valid subscribe padded with JSON whitespace: only its size is wrong.
    const body = JSON.stringify({ op: 'subscribe', ticket, robot_ids: [randomUUID()] });
    const text = body.slice(0, -1) + ' '.repeat(size - body.length) + '}';
    expect(Buffer.byteLength(text)).toBe(size);
    c.send(text);
    await until(() => c.closed !== null, 5_000, 'close');
    expect(c.closed!.code).toBe(4400);
    expect(c.closed!.reason).toBe(`message too large: ${size} bytes, the limit is ${CAP}`);
    expect(c.of('error')).toEqual([{ op: 'error', code: 'bad_request', message: `message too large: ${size} bytes, the limit is ${CAP}` }]);
    expect(c.of('subscribed')).toHaveLength(0);
  });
});
