/**
 * Issue 8 item 5: outstanding stream tickets are bounded per API key (100) and per organization (500),
 * far below the gateway-wide bound (10,000), so one organization cannot starve the others. Through
 * HTTP against `fleetgw serve`, with keys and organizations made by `fleetgw admin`.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { openStream, requestTicket } from '../support/stream-client.js';
import { until } from '../support/until.js';

const PER_KEY = 100;
const PER_ORG = 500;

describe('outstanding stream ticket bounds', () => {
  let a: ReturnType<typeof makeDataDir>;
  let b: { orgId: string; fleetId: string; apiKey: string };
  const aKeys: string[] = [];
  let gw: RunningGateway;

  beforeAll(async () => {
    a = makeDataDir('fleetgw-tickets-');
    aKeys.push(a.apiKey);
    for (let i = 0; i < PER_ORG / PER_KEY; i++) {
      aKeys.push(adminJson<{ apiKey: string }>(['create-key', '--data-dir', a.dataDir, '--org', a.orgId, '--permissions', 'robots:read']).apiKey);
    }
    // A second organization in the same gateway.
    b = adminJson<typeof b>(['init', '--data-dir', a.dataDir, '--another-org', '--org', 'Other', '--fleet', 'Depot']);
    gw = await startGatewayProcess(a.dataDir);
  });

  afterAll(async () => {
    await gw?.stop();
    rmSync(a.dataDir, { recursive: true, force: true });
  });

  /** `n` ticket requests with `apiKey` (10 at a time); returns the responses in order. */
  const ask = async (apiKey: string, orgId: string, fleetId: string, n: number) => {
    const out: Awaited<ReturnType<typeof requestTicket>>[] = [];
    for (let i = 0; i < n; i += 10) {
      const batch = Array.from({ length: Math.min(10, n - i) }, () => requestTicket(gw.ready.http, apiKey, orgId, fleetId));
      out.push(...(await Promise.all(batch)));
    }
    return out;
  };

  const expectRefused = (r: Awaited<ReturnType<typeof requestTicket>>, bound: string, max: number, words: RegExp): void => {
    expect(r.status).toBe(429);
    expect(r.body.code).toBe('rate_limited');
    expect(r.body.error).toMatch(words);
    expect(r.body.details).toMatchObject({ bound, max });
    const retryAfter = Number(r.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    expect(r.body.details.retryAfterS).toBe(retryAfter);
  };

  it('one organization exhausts its own bounds (429 naming the bound) while another still gets tickets', async () => {
    // Per key: the 101st unredeemed ticket of one key is refused.
    const first = await ask(aKeys[0]!, a.orgId, a.fleetId, PER_KEY + 1);
    expect(first.slice(0, PER_KEY).map((r) => r.status)).toEqual(Array(PER_KEY).fill(201));
    expectRefused(first[PER_KEY]!, 'api_key', PER_KEY, /per-API-key bound of 100/);

    // Per organization: more keys of the same organization fill it up to 500, then every key of it is refused.
    for (const key of aKeys.slice(1, PER_ORG / PER_KEY)) {
      expect((await ask(key, a.orgId, a.fleetId, PER_KEY)).every((r) => r.status === 201)).toBe(true);
    }
    const fresh = aKeys[PER_ORG / PER_KEY]!; // holds no ticket yet
    expectRefused((await ask(fresh, a.orgId, a.fleetId, 1))[0]!, 'organization', PER_ORG, /per-organization bound of 500/);

    // Another organization is not starved.
    const other = await ask(b.apiKey, b.orgId, b.fleetId, 20);
    expect(other.map((r) => r.status)).toEqual(Array(20).fill(201));

    // Redeeming a ticket frees its slot: the bounds count outstanding tickets only.
    const c = openStream(first[0]!.body.url as string);
    await c.opened;
    c.send({ op: 'subscribe', ticket: first[0]!.body.ticket });
    await until(() => c.of('subscribed').length === 1, 5_000, 'subscribed');
    c.ws.close();
    expect((await ask(fresh, a.orgId, a.fleetId, 1))[0]!.status).toBe(201);
    expectRefused((await ask(fresh, a.orgId, a.fleetId, 1))[0]!, 'organization', PER_ORG, /per-organization/);
  }, 60_000);
});
