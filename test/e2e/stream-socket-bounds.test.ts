/**
 * Issue 8 item 5 follow-up: open live-stream sockets are bounded per API key (50) and per
 * organization (200), far below the gateway-wide bound (1,000), so one organization cannot redeem its
 * way to every socket and starve the others. Through the real `fleetgw serve` process and real
 * WebSocket clients, with keys and organizations made by `fleetgw admin`.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { openStream, requestTicket, type StreamClient } from '../support/stream-client.js';
import { until } from '../support/until.js';

const PER_KEY = 50;
const PER_ORG = 200;

describe('open stream socket bounds', () => {
  let a: ReturnType<typeof makeDataDir>;
  let b: { orgId: string; fleetId: string; apiKey: string };
  const aKeys: string[] = [];
  const clients: StreamClient[] = [];
  let gw: RunningGateway;

  beforeAll(async () => {
    a = makeDataDir('fleetgw-sockets-');
    aKeys.push(a.apiKey);
    for (let i = 0; i < PER_ORG / PER_KEY; i++) {
      aKeys.push(adminJson<{ apiKey: string }>(['create-key', '--data-dir', a.dataDir, '--org', a.orgId, '--permissions', 'robots:read']).apiKey);
    }
    b = adminJson<typeof b>(['init', '--data-dir', a.dataDir, '--another-org', '--org', 'Other', '--fleet', 'Depot']);
    gw = await startGatewayProcess(a.dataDir);
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.ws.terminate();
    await gw?.stop();
    rmSync(a.dataDir, { recursive: true, force: true });
  });

  /** A ticket of `apiKey`, redeemed in the subscribe message (or as a subprotocol); resolves once subscribed or closed. */
  async function connect(apiKey: string, orgId: string, fleetId: string, viaSubprotocol = false): Promise<StreamClient> {
    const t = await requestTicket(gw.ready.http, apiKey, orgId, fleetId);
    expect(t.status).toBe(201);
    const c = viaSubprotocol ? openStream(t.body.url as string, ['fleetgw.v1', `fleetgw.ticket.${t.body.ticket as string}`]) : openStream(t.body.url as string);
    clients.push(c);
    await c.opened;
    c.send(viaSubprotocol ? { op: 'subscribe' } : { op: 'subscribe', ticket: t.body.ticket });
    await until(() => c.of('subscribed').length === 1 || c.closed !== null, 5_000, 'subscribed or closed');
    return c;
  }

  const expectRefused = async (c: StreamClient, words: RegExp): Promise<void> => {
    await until(() => c.closed !== null, 5_000, 'refused socket closed');
    expect(c.closed?.code).toBe(4429);
    expect(c.closed?.reason).toMatch(words);
    expect(c.of('error')[0]).toMatchObject({ code: 'rate_limited', message: expect.stringMatching(words) });
    expect(c.of('subscribed')).toEqual([]);
  };

  const openIn = (cs: StreamClient[]): number => cs.filter((c) => c.closed === null && c.of('subscribed').length === 1).length;

  it('one organization at its bounds is refused with 4429 while another organization still connects', async () => {
    // Per key: the 51st open socket of one key is refused.
    const first: StreamClient[] = [];
    for (let i = 0; i < PER_KEY; i++) first.push(await connect(aKeys[0]!, a.orgId, a.fleetId));
    expect(openIn(first)).toBe(PER_KEY);
    await expectRefused(await connect(aKeys[0]!, a.orgId, a.fleetId), /this API key already has 50 open streams/);

    // Per organization: more keys of the same organization fill it to 200; then any key of it is refused,
    // with the ticket in the subscribe message or as a subprotocol.
    for (const key of aKeys.slice(1, PER_ORG / PER_KEY)) {
      for (let i = 0; i < PER_KEY; i++) expect((await connect(key, a.orgId, a.fleetId)).of('subscribed')).toHaveLength(1);
    }
    const fresh = aKeys[PER_ORG / PER_KEY]!; // holds no socket yet
    await expectRefused(await connect(fresh, a.orgId, a.fleetId), /this organization already has 200 open streams/);
    await expectRefused(await connect(fresh, a.orgId, a.fleetId, true), /this organization already has 200 open streams/);

    // Another organization is not starved.
    const other = await connect(b.apiKey, b.orgId, b.fleetId);
    expect(other.of('subscribed')).toHaveLength(1);
    expect(other.closed).toBeNull();

    // The bounds count open sockets: closing one frees its slot.
    first[0]!.ws.close();
    await until(() => first[0]!.closed !== null, 5_000, 'closed');
    await until(async () => (await connect(fresh, a.orgId, a.fleetId)).of('subscribed').length === 1, 5_000, 'a slot freed by a close is usable again');
  }, 120_000);
});
