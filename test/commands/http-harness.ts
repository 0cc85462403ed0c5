/**
 * A real command stack for the HTTP tests: temp LMDB, the gRPC robot link server on 127.0.0.1:0,
 * the command service, the router with every command route, served by uWS on 127.0.0.1:0. Robots
 * are the simulator's (src/sim: real RobotAgent + robot model + command policy) or plain agents.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { RobotAgent, type RobotAgentOptions } from '../../src/agent/agent.js';
import { commandReadRoutes } from '../../src/api/routes/command-read.js';
import { controlRobotRoutes } from '../../src/api/routes/control-robot.js';
import { robotCommandRoutes } from '../../src/api/routes/robot-commands.js';
import { robotConfigRoutes } from '../../src/api/routes/robot-config.js';
import { CommandService, type CommandServiceOptions } from '../../src/commands/service.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { apiKeyAuth } from '../../src/auth/authenticate.js';
import { createRouter } from '../../src/http/router.js';
import { startHttpServer, type HttpServer } from '../../src/http/uws-adapter.js';
import { startRobotLinkServer, type RobotLinkServer } from '../../src/robotlink/index.js';
import { runSimFleet, type SimFleet } from '../../src/sim/index.js';
import { addRobot, createApiKey, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

export interface Cred {
  robotId: string;
  robotToken: string;
}

export interface Stack {
  dir: string;
  store: Store;
  link: RobotLinkServer;
  svc: CommandService;
  http: HttpServer;
  orgId: string;
  fleetId: string;
  /** Another fleet of the same organization, with one robot. */
  otherFleetId: string;
  otherRobot: Cred;
  /** Active robots of the fleet (none connected until a test starts them). */
  robots: Cred[];
  inactive: Cred;
  keys: {
    /** robots:write + robots:read + fleet:read */
    write: string;
    writeId: string;
    /** + operations:control */
    control: string;
    read: string;
    fleetRead: string;
    /** org-wide key of another organization, every permission */
    foreign: string;
  };
  /** Starts simulated robots (policy from src/sim/policy.ts) for these credentials. */
  sim(creds: Cred[], opts?: { noRemoteConfig?: (i: number) => boolean }): SimFleet;
  /** A plain RobotAgent for one robot (the test decides its handler and policy). */
  agent(cred: Cred, opts: Partial<RobotAgentOptions>): RobotAgent;
  /** Starts another command service + link + HTTP server on the same data dir (gateway restart). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface CallResult {
  status: number;
  json: Record<string, unknown>;
}

/** One HTTP call to the stack. */
export async function call(s: Stack, method: string, path: string, key: string, body?: unknown): Promise<CallResult> {
  const res = await fetch(`${s.http.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** Starts the stack with `robotCount` active robots. */
export async function startStack(robotCount: number, svcOpts: Partial<CommandServiceOptions> = {}): Promise<Stack> {
  const dir = mkdtempSync(join(os.tmpdir(), 'fleetgw-cmdhttp-'));
  const store = openStore(dir);
  const org = createOrg(store, 'org');
  const fleet = createFleet(store, org.orgId, 'fleet');
  const other = createFleet(store, org.orgId, 'other');
  const add = (fleetId: string, name: string, active = true): Cred => {
    const r = addRobot(store, { fleetId, name, capabilities: [], active });
    return { robotId: r.record.robotId, robotToken: r.robotToken };
  };
  const robots = Array.from({ length: robotCount }, (_, i) => add(fleet.fleetId, `r${i}`));
  const inactive = add(fleet.fleetId, 'spare', false);
  const otherRobot = add(other.fleetId, 'o1');
  const key = (permissions: string[], orgId = org.orgId) => createApiKey(store, { orgId, fleetId: null, permissions, expiresAtMs: null });
  const write = key(['robots:write', 'robots:read', 'fleet:read']);
  const otherOrg = createOrg(store, 'other org');
  const keys = {
    write: write.apiKey,
    writeId: write.record.apiKeyId,
    control: key(['robots:write', 'robots:read', 'operations:control']).apiKey,
    read: key(['robots:read']).apiKey,
    fleetRead: key(['fleet:read']).apiKey,
    foreign: key(['robots:write', 'robots:read', 'fleet:read', 'operations:control'], otherOrg.orgId).apiKey,
  };

  const running: { link: RobotLinkServer; svc: CommandService; http: HttpServer } = await startGateway(store, svcOpts);
  const sims: SimFleet[] = [];
  const agents: RobotAgent[] = [];
  const stack: Stack = {
    dir,
    store,
    get link() {
      return running.link;
    },
    get svc() {
      return running.svc;
    },
    get http() {
      return running.http;
    },
    orgId: org.orgId,
    fleetId: fleet.fleetId,
    otherFleetId: other.fleetId,
    otherRobot,
    robots,
    inactive,
    keys,
    sim: (creds, opts = {}) => {
      const f = runSimFleet({ grpc: running.link.address, robots: creds, hz: 5, ...(opts.noRemoteConfig ? { noRemoteConfig: opts.noRemoteConfig } : {}) });
      sims.push(f);
      return f;
    },
    agent: (cred, opts) => {
      const a = new RobotAgent({
        address: running.link.address,
        ...cred,
        dedicatedConnection: true,
        reconnect: { initialMs: 20, maxMs: 100 },
        onCommand: () => ({ accept: true }),
        ...opts,
      });
      agents.push(a);
      return a;
    },
    restart: async () => {
      const port = running.link.port;
      await stopGateway(running);
      Object.assign(running, await startGateway(store, svcOpts, port));
    },
    close: async () => {
      for (const f of sims) await f.stop();
      for (const a of agents) await a.stop();
      await stopGateway(running);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}

async function startGateway(store: Store, svcOpts: Partial<CommandServiceOptions>, port = 0): Promise<{ link: RobotLinkServer; svc: CommandService; http: HttpServer }> {
  // A restart binds the same robot-link port, so agents reconnect to it.
  const link = await startRobotLinkServer({ store, host: '127.0.0.1', port, tls: null });
  const svc = new CommandService({ store, link: link.link, ...svcOpts });
  const deps = { store, commands: svc };
  const routes = [...controlRobotRoutes(deps), ...robotCommandRoutes(deps), ...robotConfigRoutes(deps), ...commandReadRoutes(deps)];
  const router = createRouter(routes, { auth: apiKeyAuth(store), rateLimiter: new RateLimiter({ burst: 100_000 }) });
  const http = await startHttpServer({ host: '127.0.0.1', port: 0, tls: null, handle: router });
  return { link, svc, http };
}

async function stopGateway(g: { link: RobotLinkServer; svc: CommandService; http: HttpServer }): Promise<void> {
  g.http.close();
  await g.svc.close();
  await g.link.close();
}

/** Polls `cond` every 10 ms until true or `ms` elapse. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
