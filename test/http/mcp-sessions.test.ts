/**
 * The MCP session table (src/http/mcp-sessions.ts, mcp-session-bounds.ts) on plain objects, no
 * sockets: a session answers only to its credential, the per-credential, per-organization and total
 * bounds, which idle session makes room, pings not counting as use, expiry, and what the SDK transport
 * refuses becoming catalog errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { McpExchange } from '../../src/api/mcp/exchange.js';
import { toolServerFactory } from '../../src/api/mcp/tool-server.js';
import { ApiError } from '../../src/errors/catalog.js';
import { type McpSessionLimits } from '../../src/http/mcp-session-bounds.js';
import { McpSessions } from '../../src/http/mcp-sessions.js';

let clock = 1_000_000;
const tables: McpSessions[] = [];
afterEach(async () => {
  for (const t of tables.splice(0)) await t.close();
});

function table(limits: Partial<McpSessionLimits> = {}): McpSessions {
  const newServer = toolServerFactory({ tools: [], dispatch: () => Promise.reject(new Error('no tool is called here')), version: 'test' });
  const t = new McpSessions(newServer, { maxSessions: 3, maxPerOrg: 3, maxPerOwner: 2, idleMs: 500, timeoutMs: 1_000, ...limits }, () => clock);
  tables.push(t);
  return t;
}

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

/** Credentials are named `<org>.<key>`: `a.1` is key 1 of organization a. */
function exchange(owner: string, message: unknown, sessionId?: string, method: 'POST' | 'DELETE' = 'POST'): McpExchange {
  const org = owner.split('.')[0]!;
  return {
    method, owner, org, sessionId, protocolVersion: sessionId === undefined ? undefined : '2025-06-18', message,
    call: { auth: { actorType: 'api_key', apiKeyId: owner, orgId: org, fleetId: null, permissions: [] }, aborted: new AbortController().signal, client: '127.0.0.1' },
  };
}

async function open(t: McpSessions, owner: string): Promise<string> {
  const a = await t.handle(exchange(owner, INIT));
  expect(a.status).toBe(200);
  expect(JSON.parse(a.body!)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'fleet-gateway' } } });
  return a.headers['mcp-session-id']!;
}

const list = (t: McpSessions, owner: string, sessionId: string): Promise<unknown> => t.handle(exchange(owner, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId));
const ping = (t: McpSessions, owner: string, sessionId: string): Promise<unknown> => t.handle(exchange(owner, { jsonrpc: '2.0', id: 3, method: 'ping' }, sessionId));
/** Whether the session still answers its credential. */
const alive = (t: McpSessions, owner: string, sessionId: string): Promise<boolean> => ping(t, owner, sessionId).then(() => true, () => false);

async function refused(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('MCP sessions', () => {
  it('serves a session to its credential only; another credential gets 404 like an unknown id', async () => {
    const t = table();
    const id = await open(t, 'a');
    expect(await list(t, 'a', id)).toMatchObject({ status: 200 });
    const stolen = await refused(list(t, 'b', id));
    expect(stolen.id).toBe('mcp_session_not_found');
    // The id is the session's bearer: never echoed back in the error.
    expect(JSON.stringify({ message: stolen.message, details: stolen.details })).not.toContain(id);
    expect((await refused(list(t, 'a', '00000000-0000-4000-8000-000000000000'))).id).toBe('mcp_session_not_found');
    expect((await refused(t.handle(exchange('a', { jsonrpc: '2.0', id: 3, method: 'tools/list' })))).id).toBe('mcp_session_required');
    // A notification is accepted without a body.
    expect(await t.handle(exchange('a', { jsonrpc: '2.0', method: 'notifications/initialized' }, id))).toMatchObject({ status: 202, body: null });
  });

  it('turns what the SDK refuses into catalog errors', async () => {
    const t = table();
    const id = await open(t, 'a');
    const again = await refused(t.handle(exchange('a', INIT, id)));
    expect(again.id).toBe('mcp_transport');
    expect(again.message).toMatch(/already initialized/);
    const version = await refused(t.handle({ ...exchange('a', { jsonrpc: '2.0', id: 4, method: 'tools/list' }, id), protocolVersion: '1999-01-01' }));
    expect(version.message).toMatch(/Unsupported protocol version/);
  });

  it('evicts the credential\'s own least recently used session past its bound, refuses past the total bound', async () => {
    const t = table();
    const a1 = await open(t, 'a');
    clock += 10;
    const a2 = await open(t, 'a');
    clock += 10;
    await list(t, 'a', a1);
    clock += 10;
    const a3 = await open(t, 'a');
    expect(t.size).toBe(2);
    // a2 was the least recently used: gone; a1 (used since) and a3 remain.
    expect((await refused(list(t, 'a', a2))).id).toBe('mcp_session_not_found');
    await list(t, 'a', a1);
    await list(t, 'a', a3);
    await open(t, 'b');
    const full = await refused(open(t, 'c'));
    expect(full.id).toBe('mcp_sessions_full');
    expect(full.status).toBe(503);
    expect(Number(full.headers['retry-after'])).toBeGreaterThan(0);
    expect(t.size).toBe(3);
  });

  it('bounds an organization far below the gateway: its keys are refused (429) while another organization opens sessions', async () => {
    const t = table({ maxSessions: 8, maxPerOrg: 3, maxPerOwner: 2, idleMs: 10_000, timeoutMs: 60_000 });
    for (const owner of ['a.1', 'a.1', 'a.2']) {
      await open(t, owner);
      clock += 1_000;
    }
    const quota = await refused(open(t, 'a.3'));
    expect(quota).toMatchObject({ id: 'mcp_session_quota', status: 429, code: 'rate_limited' });
    expect(quota.message).toMatch(/per-organization bound of 3 MCP sessions/);
    // The first of a's sessions turns idle 10 s after its work: 7 s from now.
    expect(quota.headers['retry-after']).toBe('7');
    expect(quota.details).toEqual({ bound: 'organization', max: 3, retryAfterS: 7 });
    await open(t, 'b.1');
    await open(t, 'b.1');
  });

  it('makes room in a full organization from its idle sessions, the largest holder first; pings do not count as use', async () => {
    const t = table({ maxSessions: 8, maxPerOrg: 4, maxPerOwner: 3, idleMs: 10_000, timeoutMs: 60_000 });
    const a1 = [await open(t, 'a.1'), await open(t, 'a.1'), await open(t, 'a.1')];
    const a2 = await open(t, 'a.2');
    clock += 5_000;
    await list(t, 'a.1', a1[2]!);
    clock += 6_000;
    // a1[0], a1[1] and a2 are idle (no work for 11 s) however often they ping; a1[2] worked 6 s ago.
    for (const id of [a1[0]!, a1[1]!]) await ping(t, 'a.1', id);
    await ping(t, 'a.2', a2);
    await open(t, 'a.3');
    // a.1 holds the most sessions: its least recently worked idle one made room.
    expect(await alive(t, 'a.1', a1[0]!)).toBe(false);
    expect(await Promise.all([alive(t, 'a.1', a1[1]!), alive(t, 'a.1', a1[2]!), alive(t, 'a.2', a2)])).toEqual([true, true, true]);
    await open(t, 'a.3');
    expect(await alive(t, 'a.1', a1[1]!)).toBe(false);
    // a.3 holds 2 (new), a.1 one (worked 6 s ago), a.2 one (idle): only a.2's is idle, so it goes.
    await open(t, 'a.4');
    expect(await alive(t, 'a.2', a2)).toBe(false);
    expect(await alive(t, 'a.1', a1[2]!)).toBe(true);
  });

  it('makes room in a full gateway from the largest organization\'s idle sessions, never from sessions in use', async () => {
    const t = table({ maxSessions: 5, maxPerOrg: 3, maxPerOwner: 3, idleMs: 10_000, timeoutMs: 60_000 });
    const opened = async (owner: string): Promise<string> => {
      clock += 10;
      return open(t, owner);
    };
    const a = [await opened('a.1'), await opened('a.1'), await opened('a.1')];
    const b = [await opened('b.1'), await opened('b.1')];
    clock += 11_000;
    for (const id of a) await ping(t, 'a.1', id);
    await list(t, 'b.1', b[0]!);
    // Everyone is idle but b[0]; a holds the most: a[0] goes, not b[1] (idle as well, but b is smaller).
    await open(t, 'c.1');
    expect(await alive(t, 'a.1', a[0]!)).toBe(false);
    expect(await Promise.all([alive(t, 'b.1', b[0]!), alive(t, 'b.1', b[1]!)])).toEqual([true, true]);
    // a and b hold 2 each now: the least recently worked idle session of the two goes, a[1] (opened before b[1]).
    await open(t, 'c.1');
    expect(await alive(t, 'a.1', a[1]!)).toBe(false);
    // Work keeps the rest in use: nothing idle, so the next organization is refused until the first turns idle.
    for (const [owner, id] of [['a.1', a[2]!], ['b.1', b[1]!]] as const) await list(t, owner, id);
    clock += 2_000;
    const full = await refused(open(t, 'd.1'));
    expect(full).toMatchObject({ id: 'mcp_sessions_full', status: 503, code: 'unavailable' });
    expect(full.details).toMatchObject({ bound: 'gateway', max: 5 });
    expect(Number(full.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(full.headers['retry-after'])).toBeLessThanOrEqual(10);
  });

  it('closes sessions without work past the timeout, pings notwithstanding, and on DELETE', async () => {
    const t = table();
    const a = await open(t, 'a');
    const b = await open(t, 'b');
    clock += 600;
    await list(t, 'b', b);
    await ping(t, 'a', a);
    clock += 600;
    t.closeIdle();
    expect(t.size).toBe(1);
    expect((await refused(list(t, 'a', a))).message).toMatch(/expired after 1 s without a request other than ping/);
    // Past the timeout and not swept yet: gone as well.
    clock += 1_000;
    expect((await refused(ping(t, 'b', b))).id).toBe('mcp_session_not_found');
    const b2 = await open(t, 'b');
    // Another credential cannot end the session; its own can.
    expect((await refused(t.handle(exchange('a', undefined, b2, 'DELETE')))).id).toBe('mcp_session_not_found');
    expect(await t.handle(exchange('b', undefined, b2, 'DELETE'))).toMatchObject({ status: 204 });
    expect(t.size).toBe(0);
  });

  it('never closes a session that is still connecting to make room for another', async () => {
    const base = toolServerFactory({ tools: [], dispatch: () => Promise.reject(new Error('no tool is called here')), version: 'test' });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let first = true;
    const newServer = (): ReturnType<typeof base> => {
      const server = base();
      if (first) {
        first = false;
        const connect = server.connect.bind(server);
        server.connect = async (transport) => {
          await gate;
          return connect(transport);
        };
      }
      return server;
    };
    const t = new McpSessions(newServer, { maxSessions: 3, maxPerOrg: 3, maxPerOwner: 1, idleMs: 500, timeoutMs: 1_000 }, () => clock);
    tables.push(t);
    const connecting = t.handle(exchange('a.1', INIT));
    // The only slot of a.1 is taken by a session still connecting: the second waits its turn, 429.
    expect((await refused(t.handle(exchange('a.1', INIT)))).id).toBe('mcp_session_quota');
    release();
    expect((await connecting).status).toBe(200);
  });
});
