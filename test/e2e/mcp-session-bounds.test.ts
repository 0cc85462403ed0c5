/**
 * MCP session bounds through `fleetgw serve` and the SDK's own client (docs/mcp.md, "Sessions"): one
 * organization cannot take every session, however many keys it mints, and sessions that only ping
 * neither crowd out other organizations nor outlive the timeout.
 */
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore } from '../../src/store/lmdb.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

type Json = Record<string, any>;

interface Refusal {
  status: number;
  body: Json;
  retryAfterS: number;
}

type Attempt = { client: Client; refusal?: undefined } | { client?: undefined; refusal: Refusal };

const clients: Client[] = [];

/** `keysPerOrg` org-wide read keys in each of `orgs` new organizations, written to the store before the gateway starts. */
async function mintKeys(dataDir: string, orgs: string[], keysPerOrg: number): Promise<Record<string, string[]>> {
  const store = openStore(dataDir);
  const out: Record<string, string[]> = {};
  for (const name of orgs) {
    const org = createOrg(store, name);
    out[name] = Array.from({ length: keysPerOrg }, () => createApiKey(store, { orgId: org.orgId, fleetId: null, permissions: ['robots:read'], expiresAtMs: null }).apiKey);
  }
  await store.close();
  return out;
}

/** An SDK client's `initialize` as `key`: the connected client, or the gateway's refusal (status, body, Retry-After). */
async function connect(base: string, key: string): Promise<Attempt> {
  let last: Response | undefined;
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    // Only to read Retry-After, which the SDK does not surface.
    fetch: async (url, init) => (last = await fetch(url, init)),
  });
  const client = new Client({ name: 'mcp-bounds-e2e', version: '1.0.0' });
  try {
    await client.connect(transport);
    clients.push(client);
    return { client };
  } catch (err: unknown) {
    await client.close();
    if (!(err instanceof StreamableHTTPError) || err.code === undefined) throw err;
    const body = JSON.parse(err.message.slice(err.message.indexOf('{'))) as Json;
    return { refusal: { status: err.code, body, retryAfterS: Number(last?.headers.get('retry-after')) } };
  }
}

/** Whether the session still answers (a closed one gets 404). */
const pings = (c: Client): Promise<boolean> => c.ping().then(() => true, (err: unknown) => {
  if (err instanceof StreamableHTTPError && err.code === 404) return false;
  throw err;
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('MCP sessions with the default bounds (16 per key, 64 per organization, 512 in all)', () => {
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;
  let keys: Record<string, string[]>;

  beforeAll(async () => {
    d = makeDataDir('fleetgw-mcp-bounds-');
    keys = await mintKeys(d.dataDir, ['Greedy', 'Other'], 17);
    gw = await startGatewayProcess(d.dataDir);
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('17 keys of one organization x 16 sessions get 64; while they ping, another organization still connects', async () => {
    const opened: Client[] = [];
    const refusals: Refusal[] = [];
    for (const key of keys.Greedy!) {
      for (const a of await Promise.all(Array.from({ length: 16 }, () => connect(gw.ready.http, key)))) {
        if (a.client !== undefined) opened.push(a.client);
        else refusals.push(a.refusal);
      }
    }
    expect(opened).toHaveLength(64);
    expect(refusals).toHaveLength(17 * 16 - 64);
    for (const r of refusals) {
      expect(r.status).toBe(429);
      expect(r.body).toMatchObject({ code: 'rate_limited', details: { bound: 'organization', max: 64 } });
      expect(r.body.error).toMatch(/per-organization bound of 64 MCP sessions/);
      expect(r.retryAfterS).toBe(r.body.details.retryAfterS);
      expect(r.retryAfterS).toBeGreaterThanOrEqual(1);
      expect(r.retryAfterS).toBeLessThanOrEqual(120);
    }
    // Every session of the organization stays alive on pings...
    expect((await Promise.all(opened.map(pings))).every(Boolean)).toBe(true);
    // ...and another organization is not locked out.
    const other = await connect(gw.ready.http, keys.Other![0]!);
    expect(other.refusal).toBeUndefined();
    expect((await other.client!.listTools()).tools.length).toBeGreaterThan(0);
  }, 120_000);
});

describe('MCP sessions that only ping (bounds 2 per key, 3 per organization, 6 in all; idle after 10 s, closed after 20 s)', () => {
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;
  let keys: Record<string, string[]>;

  beforeAll(async () => {
    d = makeDataDir('fleetgw-mcp-idle-');
    keys = await mintKeys(d.dataDir, ['Pinger', 'Worker', 'Late'], 2);
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http'], {
      FLEETGW_MCP_MAX_SESSIONS: '6',
      FLEETGW_MCP_MAX_SESSIONS_PER_ORG: '3',
      FLEETGW_MCP_MAX_SESSIONS_PER_KEY: '2',
      FLEETGW_MCP_SESSION_IDLE_S: '10',
      FLEETGW_MCP_SESSION_TIMEOUT_S: '20',
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('a full gateway refuses (503) while every session works, closes an idle pinging session for another organization, and expires the rest', async () => {
    const open = async (key: string): Promise<Client> => {
      const a = await connect(gw.ready.http, key);
      expect(a.refusal).toBeUndefined();
      return a.client!;
    };
    const [p1, p2] = keys.Pinger!;
    const [w1, w2] = keys.Worker!;
    const pinger = [await open(p1!), await open(p1!), await open(p2!)];
    const worker = [await open(w1!), await open(w1!), await open(w2!)];

    // Everyone has just worked: nothing is idle, so a third organization is refused gateway-wide.
    await Promise.all([...pinger, ...worker].map((c) => c.listTools()));
    const full = await connect(gw.ready.http, keys.Late![0]!);
    expect(full.refusal).toBeDefined();
    expect(full.refusal!.status).toBe(503);
    expect(full.refusal!.body).toMatchObject({ code: 'unavailable', details: { bound: 'gateway', max: 6 } });
    expect(full.refusal!.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(full.refusal!.retryAfterS).toBeLessThanOrEqual(10);

    // One organization only pings, the other works; the third gets in once a pinging session is idle.
    let late: Client | undefined;
    await until(
      async () => {
        await Promise.all([...pinger.map((c) => c.ping().catch(() => undefined)), ...worker.map((c) => c.listTools())]);
        const a = await connect(gw.ready.http, keys.Late![0]!);
        if (a.refusal !== undefined) {
          expect(a.refusal.status).toBe(503);
          return false;
        }
        late = a.client;
        return true;
      },
      60_000,
      'the third organization to get a session',
      200,
    );
    expect((await late!.listTools()).tools.length).toBeGreaterThan(0);
    // The session closed for it was a pinging one; every working one is untouched.
    expect((await Promise.all(pinger.map(pings))).filter(Boolean)).toHaveLength(2);
    expect((await Promise.all(worker.map((c) => c.listTools().then(() => true)))).every(Boolean)).toBe(true);

    // Pings do not keep a session: the pinging ones are closed once they have done no work for 20 s.
    await until(
      async () => {
        await Promise.all(worker.map((c) => c.listTools()));
        return (await Promise.all(pinger.map(pings))).every((alive) => !alive);
      },
      60_000,
      'the pinging sessions to expire',
      200,
    );
    expect((await Promise.all(worker.map((c) => c.listTools().then(() => true)))).every(Boolean)).toBe(true);
  }, 180_000);
});
