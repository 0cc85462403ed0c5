/**
 * A real uWS + router + LMDB stack whose store can be closed and reopened on the same data dir (a
 * gateway restart), for idempotency and catalog tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIVE_PERMISSIONS } from '../../src/auth/permissions.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { createRouter } from '../../src/http/router.js';
import type { RouteDef } from '../../src/api/route.js';
import { startHttpServer, type HttpServer } from '../../src/http/uws-adapter.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { EventLog } from '../../src/events/log.js';
import { IdempotencyClaims } from '../../src/idempotency/index.js';

/** The per-store services a gateway builds in its composition root, built the same way here. */
export interface StackServices {
  store: Store;
  events: EventLog;
  idempotency: IdempotencyClaims;
}

function services(store: Store): StackServices {
  return { store, events: new EventLog(store), idempotency: new IdempotencyClaims(store) };
}

export interface Stack {
  dataDir: string;
  store: Store;
  /** The event log the routes write (one per opened store). */
  events: EventLog;
  server: HttpServer;
  orgId: string;
  fleetId: string;
  otherFleetId: string;
  key: string;
  keyId: string;
  /** Same org, same permissions, another key (another actor). */
  key2: string;
  /** One key per live permission, carrying only that permission. */
  only: Record<string, string>;
  robots: { active: string[]; inactive: string; foreign: string };
  /** Closes HTTP and the store, reopens both on the same dir with routes built for the new store. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the stack; `routes(services)` builds the routes under test for a (re)opened store. */
export async function startStack(routes: (services: StackServices) => RouteDef[]): Promise<Stack> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-idem-'));
  let store = openStore(dataDir);
  const orgId = createOrg(store, 'Org').orgId;
  const fleetId = createFleet(store, orgId, 'Yard').fleetId;
  const otherFleetId = createFleet(store, orgId, 'Other').fleetId;
  const robot = (fleet: string, name: string, caps: string[], active = true): string =>
    addRobot(store, { fleetId: fleet, name, capabilities: caps, active }).record.robotId;
  const robots = {
    active: [robot(fleetId, 'r1', ['mow', 'drive']), robot(fleetId, 'r2', ['mow', 'drive']), robot(fleetId, 'r3', ['drive'])],
    inactive: robot(fleetId, 'spare', ['mow', 'drive'], false),
    foreign: robot(otherFleetId, 'elsewhere', ['mow', 'drive']),
  };
  const full = createApiKey(store, { orgId, fleetId: null, permissions: [...LIVE_PERMISSIONS], expiresAtMs: null });
  const full2 = createApiKey(store, { orgId, fleetId: null, permissions: [...LIVE_PERMISSIONS], expiresAtMs: null });
  const only: Record<string, string> = {};
  for (const p of LIVE_PERMISSIONS) only[p] = createApiKey(store, { orgId, fleetId: null, permissions: [p], expiresAtMs: null }).apiKey;

  let svc = services(store);
  const serve = async (s: Store): Promise<HttpServer> => {
    const router = createRouter(routes(svc), { auth: new ApiKeyVerifier(s), rateLimiter: new RateLimiter({ burst: 100_000, ratePerSecond: 100_000 }) });
    return startHttpServer({ host: '127.0.0.1', port: 0, tls: null, handle: router });
  };
  const stack: Stack = {
    dataDir,
    store,
    events: svc.events,
    server: await serve(store),
    orgId,
    fleetId,
    otherFleetId,
    key: full.apiKey,
    keyId: full.record.apiKeyId,
    key2: full2.apiKey,
    only,
    robots,
    async restart() {
      stack.server.close();
      await store.close();
      store = openStore(dataDir);
      svc = services(store);
      stack.store = store;
      stack.events = svc.events;
      stack.server = await serve(store);
    },
    async close() {
      stack.server.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return stack;
}

export interface Res {
  status: number;
  headers: Headers;
  json: any;
}

/** One JSON request; `body` is serialized unless it is already a string. */
export async function req(
  s: Stack,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; idem?: string; headers?: Record<string, string> } = {},
): Promise<Res> {
  const headers: Record<string, string> = { authorization: `Bearer ${opts.key ?? s.key}`, ...opts.headers };
  if (opts.idem !== undefined) headers['idempotency-key'] = opts.idem;
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  }
  const res = await fetch(`${s.server.url}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text === '' ? null : JSON.parse(text) };
}
