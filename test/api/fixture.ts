/**
 * A real gateway HTTP stack for API tests: temp LMDB with two organizations, fleets, robots and keys of
 * every shape the auth matrix needs, served by uWS on 127.0.0.1 (port 0, plain HTTP).
 */
import { latestSnapshots } from '../../src/telemetry/snapshots/index.js';
import { identityReads } from '../../src/store/identity-reads.js';
import { captureLog } from '../support/capture-log.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIVE_PERMISSIONS, RETIRED_PERMISSIONS } from '../../src/auth/permissions.js';
import { buildOpenApi } from '../../src/api/openapi.js';
import { fleetRoutes } from '../../src/api/routes/fleets.js';
import { meRoutes } from '../../src/api/routes/me.js';
import { openApiRoutes } from '../../src/api/routes/openapi.js';
import { robotRoutes } from '../../src/api/routes/robots.js';
import { RateLimiter, type RateLimitOptions } from '../../src/http/rate-limit.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { createRouter, type Router } from '../../src/http/router.js';
import type { RouteDef } from '../../src/api/route.js';
import { startHttpServer, type HttpServer } from '../../src/http/uws-adapter.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { createApiKey, revokeApiKey } from '../../src/auth/key-admin.js';

export interface Fixture {
  dataDir: string;
  store: Store;
  server: HttpServer;
  router: Router;
  routes: RouteDef[];
  document: Record<string, unknown>;
  online: Set<string>;
  logs: string[];
  ids: {
    orgA: string;
    orgB: string;
    fleetA1: string;
    fleetA2: string;
    fleetB1: string;
    robotA1: string;
    robotA1Inactive: string;
    robotA2: string;
    robotB1: string;
  };
  keys: {
    full: string;
    fullId: string;
    fleetScopedA1: string;
    orgB: string;
    retiredOnly: string;
    revoked: string;
    expired: string;
    /** One key per live permission, carrying only that permission. */
    only: Record<string, string>;
  };
  close(): Promise<void>;
}

/** Builds the fixture; `extraRoutes` lets a test add its own RouteDefs (built on the fixture's store when a function). */
export async function startFixture(opts: { rateLimit?: RateLimitOptions; extraRoutes?: RouteDef[] | ((store: Store) => RouteDef[]) } = {}): Promise<Fixture> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-api-'));
  const store = openStore(dataDir);
  const orgA = createOrg(store, 'Org A').orgId;
  const orgB = createOrg(store, 'Org B').orgId;
  const fleetA1 = createFleet(store, orgA, 'A1').fleetId;
  const fleetA2 = createFleet(store, orgA, 'A2').fleetId;
  const fleetB1 = createFleet(store, orgB, 'B1').fleetId;
  const robot = (fleetId: string, name: string, active = true): string =>
    addRobot(store, { fleetId, name, capabilities: ['drive', 'lights'], active }).record.robotId;
  const ids = {
    orgA,
    orgB,
    fleetA1,
    fleetA2,
    fleetB1,
    robotA1: robot(fleetA1, 'a1-bot'),
    robotA1Inactive: robot(fleetA1, 'a1-spare', false),
    robotA2: robot(fleetA2, 'a2-bot'),
    robotB1: robot(fleetB1, 'b1-bot'),
  };
  const key = (orgId: string, fleetId: string | null, permissions: string[], expiresAtMs: number | null = null) =>
    createApiKey(store, { orgId, fleetId, permissions, expiresAtMs });
  const full = key(orgA, null, [...LIVE_PERMISSIONS]);
  const revoked = key(orgA, null, [...LIVE_PERMISSIONS]);
  revokeApiKey(store, revoked.record.apiKeyId);
  const only: Record<string, string> = {};
  for (const p of LIVE_PERMISSIONS) only[p] = key(orgA, null, [p]).apiKey;
  const keys = {
    full: full.apiKey,
    fullId: full.record.apiKeyId,
    fleetScopedA1: key(orgA, fleetA1, [...LIVE_PERMISSIONS]).apiKey,
    orgB: key(orgB, null, [...LIVE_PERMISSIONS]).apiKey,
    retiredOnly: key(orgA, null, [...RETIRED_PERMISSIONS]).apiKey,
    revoked: revoked.apiKey,
    expired: key(orgA, null, [...LIVE_PERMISSIONS], Date.now() - 1000).apiKey,
    only,
  };

  const online = new Set<string>();
  let document: Record<string, unknown> = {};
  const routes: RouteDef[] = [
    ...openApiRoutes(() => document),
    ...meRoutes(),
    ...fleetRoutes({ store }),
    ...robotRoutes({ identity: identityReads(store), snapshots: latestSnapshots(store), isOnline: (id) => online.has(id), linkConflict: () => null }),
    ...(typeof opts.extraRoutes === 'function' ? opts.extraRoutes(store) : opts.extraRoutes ?? []),
  ];
  document = buildOpenApi(routes, { title: 'fleet-gateway', version: 'test' });
  const logs: string[] = [];
  const router = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter(opts.rateLimit), log: captureLog(logs) });
  const server = await startHttpServer({ host: '127.0.0.1', port: 0, tls: null, handle: router });
  return {
    dataDir,
    store,
    server,
    router,
    routes,
    document,
    online,
    logs,
    ids,
    keys,
    async close() {
      server.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface CallResult {
  status: number;
  headers: Headers;
  json: unknown;
}

/** One HTTP request with fetch; `key` goes in the Authorization header. */
export async function call(
  fx: Fixture,
  method: string,
  path: string,
  opts: { key?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
  const res = await fetch(`${fx.server.url}${path}`, { method, headers, body: opts.body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text === '' ? null : (JSON.parse(text) as unknown) };
}
