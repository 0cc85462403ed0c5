/**
 * The MCP session table (src/http/mcp-sessions.ts) on plain objects, no sockets: a session answers only
 * to its credential, the per-credential and total bounds, idle expiry, and what the SDK transport refuses
 * becoming catalog errors.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { McpExchange } from '../../src/api/mcp/exchange.js';
import { toolServerFactory } from '../../src/api/mcp/tool-server.js';
import { ApiError } from '../../src/errors/catalog.js';
import { McpSessions } from '../../src/http/mcp-sessions.js';

let clock = 1_000_000;
const tables: McpSessions[] = [];
afterEach(async () => {
  for (const t of tables.splice(0)) await t.close();
});

function table(): McpSessions {
  const newServer = toolServerFactory({ tools: [], dispatch: () => Promise.reject(new Error('no tool is called here')), version: 'test' });
  const t = new McpSessions(newServer, { maxSessions: 3, maxPerOwner: 2, idleMs: 1_000 }, () => clock);
  tables.push(t);
  return t;
}

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

function exchange(owner: string, message: unknown, sessionId?: string, method: 'POST' | 'DELETE' = 'POST'): McpExchange {
  return {
    method, owner, sessionId, protocolVersion: sessionId === undefined ? undefined : '2025-06-18', message,
    call: { auth: { actorType: 'api_key', apiKeyId: owner, orgId: 'o', fleetId: null, permissions: [] }, aborted: new AbortController().signal, client: '127.0.0.1' },
  };
}

async function open(t: McpSessions, owner: string): Promise<string> {
  const a = await t.handle(exchange(owner, INIT));
  expect(a.status).toBe(200);
  expect(JSON.parse(a.body!)).toMatchObject({ jsonrpc: '2.0', id: 1, result: { serverInfo: { name: 'fleet-gateway' } } });
  return a.headers['mcp-session-id']!;
}

const list = (t: McpSessions, owner: string, sessionId: string): Promise<unknown> => t.handle(exchange(owner, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId));

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
    expect((await refused(list(t, 'b', id))).id).toBe('mcp_session_not_found');
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

  it('closes sessions idle past the limit, and on DELETE', async () => {
    const t = table();
    const a = await open(t, 'a');
    const b = await open(t, 'b');
    clock += 600;
    await list(t, 'b', b);
    clock += 600;
    t.closeIdle();
    expect(t.size).toBe(1);
    expect((await refused(list(t, 'a', a))).message).toMatch(/expired after 1 s idle/);
    // Another credential cannot end the session; its own can.
    expect((await refused(t.handle(exchange('a', undefined, b, 'DELETE')))).id).toBe('mcp_session_not_found');
    expect(await t.handle(exchange('b', undefined, b, 'DELETE'))).toMatchObject({ status: 204 });
    expect(t.size).toBe(0);
  });
});
