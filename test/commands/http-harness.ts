/**
 * A real command stack for the HTTP tests: the real gateway (startGateway, in this process) on a temp
 * data dir, its store kept by the stack across restarts, plain HTTP and gRPC on 127.0.0.1, with the
 * test's command service settings. Robots are the simulator's (src/sim: real RobotAgent + robot model
 * + command policy) or plain agents.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { RobotAgent, type RobotAgentOptions } from '../../src/agent/agent.js';
import { PENDING_POLICY } from '../../src/commands/policy.js';
import type { CommandService, CommandServiceOptions } from '../../src/commands/service.js';
import { startGateway, type Gateway } from '../../src/gateway/gateway.js';
import type { RobotLink } from '../../src/protocol/robot-link.js';
import { runSimFleet, type SimFleet } from '../../src/sim/index.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

export interface Cred {
  robotId: string;
  robotToken: string;
}

export interface Stack {
  dir: string;
  store: Store;
  /** The gateway's robot link and its gRPC address. */
  link: { link: RobotLink; address: string };
  svc: CommandService;
  http: { url: string };
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
  /** Stops the gateway and starts another on the same store and robot-link port (gateway restart). */
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

  let running = await startStackGateway(dir, store, svcOpts);
  const sims: SimFleet[] = [];
  const agents: RobotAgent[] = [];
  const stack: Stack = {
    dir,
    store,
    get link() {
      return { link: running.link, address: running.grpcAddress };
    },
    get svc() {
      return running.commands;
    },
    get http() {
      return { url: running.httpUrl };
    },
    orgId: org.orgId,
    fleetId: fleet.fleetId,
    otherFleetId: other.fleetId,
    otherRobot,
    robots,
    inactive,
    keys,
    sim: (creds, opts = {}) => {
      const f = runSimFleet({ grpc: running.grpcAddress, robots: creds, hz: 5, ...(opts.noRemoteConfig ? { noRemoteConfig: opts.noRemoteConfig } : {}) });
      sims.push(f);
      return f;
    },
    agent: (cred, opts) => {
      const a = new RobotAgent({
        address: running.grpcAddress,
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
      const port = Number(running.grpcAddress.slice(running.grpcAddress.lastIndexOf(':') + 1));
      await running.close();
      running = await startStackGateway(dir, store, svcOpts, port);
    },
    close: async () => {
      for (const f of sims) await f.stop();
      for (const a of agents) await a.stop();
      await running.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}

/**
 * The real gateway (startGateway) on the stack's store, which outlives restarts. A restart binds the
 * same robot-link port, so agents reconnect to it.
 */
function startStackGateway(dir: string, store: Store, svcOpts: Partial<CommandServiceOptions>, grpcPort = 0): Promise<Gateway> {
  const { store: _store, link: _link, ...commands } = svcOpts;
  return startGateway({
    dataDir: dir,
    host: '127.0.0.1',
    httpPort: 0,
    grpcPort,
    clickhouseUrl: null,
    tls: 'insecure',
    tunables: { rateLimitBurst: 100_000 },
    overrides: { store, commands },
  });
}

/** Polls `cond` every 10 ms until true, or fails naming `what` after `ms` (a bound for a loaded machine, not a wait). */
export async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Waits until each robot's advertised command policy is compiled in full. A compile has a wall-clock
 * budget: on a loaded machine it may be cut short (actions unusable, or the policy pending) and
 * finished in the background a second or more later (policy-registry.ts).
 */
export async function untilPoliciesCompiled(s: Stack, robotIds: string[], ms = 45_000): Promise<void> {
  const complete = (robotId: string): boolean => {
    const p = s.svc.policies.get(robotId);
    return p !== undefined && p !== PENDING_POLICY && (p === null || [...p.actions.values()].every((a) => a.invalid === ''));
  };
  await until(() => robotIds.every(complete), `the command policies of ${robotIds.join(', ')} compiled`, ms);
}
