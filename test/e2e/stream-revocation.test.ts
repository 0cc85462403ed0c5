/**
 * Issue 8 item 4: a revoked or expired API key loses its live telemetry streams (close 4403 within
 * 1 s) and its unredeemed tickets (refused with 4401), through the real processes: `fleetgw serve`,
 * `fleetgw sim` sending telemetry, `fleetgw admin` revoking or letting the key expire, `ws` clients.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/lmdb.js';
import type { ApiKeyRecord } from '../../src/store/records.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { fleetgwAsync, openStream, requestTicket, startSim, type StreamClient } from '../support/stream-client.js';
import { until } from '../support/until.js';

describe('live stream of a revoked or expired API key', () => {
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;
  let sim: ChildProcess;
  const sockets: StreamClient[] = [];

  beforeAll(async () => {
    d = makeDataDir('fleetgw-revoke-');
    const robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']);
    gw = await startGatewayProcess(d.dataDir);
    sim = await startSim(d.dataDir, gw.ready.grpc, [{ robotId: robot.robotId!, robotToken: robot.robotToken! }], 20);
  });

  afterAll(async () => {
    for (const s of sockets) s.ws.terminate();
    sim?.kill('SIGTERM');
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  const newKey = (extra: string[] = []): { apiKeyId: string; apiKey: string } =>
    adminJson<{ apiKeyId: string; apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'robots:read', ...extra]);

  /** The key's record as `fleetgw admin` left it in LMDB (read from this process: LMDB is multi-process). */
  const keyRecord = async (apiKeyId: string): Promise<ApiKeyRecord> => {
    const store = openStore(d.dataDir);
    try {
      return store.apikeys.get(apiKeyId)!;
    } finally {
      await store.close();
    }
  };

  const ticketOf = async (apiKey: string): Promise<string> => {
    const t = await requestTicket(gw.ready.http, apiKey, d.orgId, d.fleetId);
    expect(t.status).toBe(201);
    return t.body.ticket as string;
  };

  /** A subscribed socket, the ticket in the subscribe message or (viaProtocol) as a subprotocol. */
  const subscribed = async (apiKey: string, viaProtocol = false): Promise<StreamClient> => {
    const ticket = await ticketOf(apiKey);
    const url = `${gw.ready.http.replace(/^http/, 'ws')}/v1/telemetry/stream`;
    const c = openStream(url, viaProtocol ? ['fleetgw.v1', `fleetgw.ticket.${ticket}`] : []);
    sockets.push(c);
    await c.opened;
    c.send(viaProtocol ? { op: 'subscribe' } : { op: 'subscribe', ticket });
    await until(() => c.of('subscribed').length === 1 || c.closed !== null, 5_000, 'subscribed');
    expect(c.closed).toBeNull();
    return c;
  };

  /** Redeems `ticket` on a new socket and returns how that socket ended. */
  const redeem = async (ticket: string): Promise<StreamClient> => {
    const c = openStream(`${gw.ready.http.replace(/^http/, 'ws')}/v1/telemetry/stream`);
    sockets.push(c);
    await c.opened;
    c.send({ op: 'subscribe', ticket });
    // The answer to a ticket is either `subscribed` or the close: the callers check which it was.
    await until(() => c.closed !== null || c.of('subscribed').length > 0, 10_000, 'ticket answer');
    return c;
  };

  const streaming = (c: StreamClient, atLeast = 3): Promise<number> => until(() => c.of('sample').length >= atLeast, 10_000, 'samples');

  it('admin revoke-key closes the key\'s streams within 1 s with 4403 and refuses its unredeemed tickets', async () => {
    const key = newKey();
    const viaMessage = await subscribed(key.apiKey);
    const viaProtocol = await subscribed(key.apiKey, true);
    const other = await subscribed(d.apiKey); // another key of the same org: must keep streaming
    const pending = await ticketOf(key.apiKey);
    await Promise.all([streaming(viaMessage), streaming(viaProtocol), streaming(other)]);

    const revoke = await fleetgwAsync(['admin', 'revoke-key', '--data-dir', d.dataDir, '--key-id', key.apiKeyId]);
    expect(revoke.status, revoke.stderr).toBe(0);
    await until(() => viaMessage.closed !== null && viaProtocol.closed !== null, 3_000, 'streams of the revoked key closed');
    // revokedAtMs is the CLI's clock just before its commit: the latency measured from it is an upper bound.
    const { revokedAtMs } = await keyRecord(key.apiKeyId);
    expect(revokedAtMs).not.toBeNull();
    for (const c of [viaMessage, viaProtocol]) {
      expect(c.closed!.code).toBe(4403);
      expect(c.closed!.reason).toMatch(/revoked or has expired/);
      expect(c.closed!.atMs - revokedAtMs!).toBeLessThan(1_000);
      expect(c.of('error').at(-1)).toMatchObject({ op: 'error', code: 'key_revoked' });
    }

    // The ticket issued before the revocation is refused at redemption.
    const late = await redeem(pending);
    expect(late.of('subscribed')).toHaveLength(0);
    expect(late.closed?.code).toBe(4401);
    expect(late.of('error')[0]).toMatchObject({ code: 'invalid_ticket' });

    // Only that key's streams ended.
    const before = other.of('sample').length;
    await until(() => other.of('sample').length > before + 3, 5_000, 'other key still streaming');
    expect(other.closed).toBeNull();
    expect((await requestTicket(gw.ready.http, key.apiKey, d.orgId, d.fleetId)).status).toBe(401);
  }, 60_000);

  it('a key that expires (create-key --expires-in) loses its stream within 1 s of expiry and its tickets', async () => {
    // A few seconds, not 1: starting the CLI alone takes about a second on a busy test machine.
    const key = newKey(['--expires-in', '4']);
    const { expiresAtMs } = await keyRecord(key.apiKeyId);
    const c = await subscribed(key.apiKey);
    const pending = await ticketOf(key.apiKey);
    await streaming(c);
    expect(Date.now()).toBeLessThan(expiresAtMs!); // set up before the expiry, or the test proves nothing

    await until(() => c.closed !== null, expiresAtMs! + 3_000 - Date.now(), 'stream of the expired key closed');
    expect(c.closed!.code).toBe(4403);
    expect(c.closed!.atMs).toBeGreaterThanOrEqual(expiresAtMs!);
    expect(c.closed!.atMs - expiresAtMs!).toBeLessThan(1_000);
    expect(c.of('error').at(-1)).toMatchObject({ code: 'key_revoked' });

    const late = await redeem(pending);
    expect(late.of('subscribed')).toHaveLength(0);
    expect(late.closed?.code).toBe(4401);
    expect((await api(gw.ready.http, key.apiKey, '/v1/robots')).status).toBe(401);
  }, 60_000);
});
