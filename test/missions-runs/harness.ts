/**
 * A mission-side gateway for tests: the real gateway (startGateway, in this process) on a temp data
 * dir, plain HTTP and gRPC on 127.0.0.1, with an injectable mission clock, and simulated robots
 * (src/sim) connected over gRPC. `restart` stops the gateway and starts it again on the same data
 * dir, as a gateway restart would.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIVE_PERMISSIONS } from '../../src/auth/permissions.js';
import { startGateway, type Gateway } from '../../src/gateway/gateway.js';
import type { Clock } from '../../src/missions/clock.js';
import type { SimMissionBehaviour } from '../../src/sim/missions.js';
import { runSimFleet, type SimFleet } from '../../src/sim/fleet.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore } from '../../src/store/lmdb.js';

export interface Seed {
  dir: string;
  orgId: string;
  fleetId: string;
  key: string;
  /** A key with every permission but missions:write. */
  noMissionsKey: string;
  /** A robot of another fleet of the same org. */
  otherFleetRobot: string;
  robots: { robotId: string; robotToken: string }[];
}

/** A data dir with one org, a fleet of `n` active robots (capability `mow`), and keys. */
export function seed(n: number): Seed {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-missions-'));
  const store = openStore(dir);
  const org = createOrg(store, 'Org');
  const fleet = createFleet(store, org.orgId, 'Yard');
  const other = createFleet(store, org.orgId, 'Other');
  const robots = Array.from({ length: n }, (_, i) => {
    const r = addRobot(store, { fleetId: fleet.fleetId, name: `bot-${i}`, capabilities: ['mow'], active: true });
    return { robotId: r.record.robotId, robotToken: r.robotToken };
  });
  const otherFleetRobot = addRobot(store, { fleetId: other.fleetId, name: 'elsewhere', capabilities: ['mow'], active: true }).record.robotId;
  const key = createApiKey(store, { orgId: org.orgId, fleetId: null, permissions: [...LIVE_PERMISSIONS], expiresAtMs: null }).apiKey;
  const noMissionsKey = createApiKey(store, { orgId: org.orgId, fleetId: null, permissions: LIVE_PERMISSIONS.filter((p) => p !== 'missions:write'), expiresAtMs: null }).apiKey;
  void store.close();
  return { dir, orgId: org.orgId, fleetId: fleet.fleetId, key, noMissionsKey, otherFleetRobot, robots };
}

export interface HarnessOptions {
  clock?: Clock;
  /** Start simulated robots (default true). */
  sim?: boolean;
  missionBehaviour?: (index: number) => SimMissionBehaviour;
  passIntervalMs?: number;
}

export interface Res {
  status: number;
  json: any;  
}

export class Harness {
  gw!: Gateway;
  sim: SimFleet | null = null;

  private constructor(readonly seed: Seed, private readonly opts: HarnessOptions) {}

  get store(): Gateway['store'] {
    return this.gw.store;
  }

  /** The robot link and its gRPC address. */
  get link(): { link: Gateway['link']; address: string } {
    return { link: this.gw.link, address: this.gw.grpcAddress };
  }

  get commands(): Gateway['commands'] {
    return this.gw.commands;
  }

  get runtime(): Gateway['runtime'] {
    return this.gw.runtime;
  }

  get missions(): Gateway['missions'] {
    return this.gw.missions;
  }

  /** Starts every part on the seed's data dir. */
  static async start(s: Seed, opts: HarnessOptions = {}): Promise<Harness> {
    const h = new Harness(s, opts);
    await h.up();
    return h;
  }

  /** Starts the gateway (again, after `down`) and, unless told not to, the simulated robots. */
  async up(): Promise<void> {
    this.gw = await startGateway({
      dataDir: this.seed.dir,
      host: '127.0.0.1',
      httpPort: 0,
      grpcPort: 0,
      clickhouseUrl: null,
      tls: 'insecure',
      tunables: { rateLimitPerSecond: 1e6, rateLimitBurst: 1e6 },
      overrides: {
        ...(this.opts.clock ? { clock: this.opts.clock } : {}),
        ...(this.opts.passIntervalMs !== undefined ? { missionPassIntervalMs: this.opts.passIntervalMs } : {}),
      },
    });
    if (this.opts.sim !== false) {
      this.sim = runSimFleet({
        grpc: this.gw.grpcAddress,
        robots: this.seed.robots,
        hz: 10,
        ...(this.opts.missionBehaviour ? { missionBehaviour: this.opts.missionBehaviour } : {}),
      });
    }
  }

  /** Stops every part (robots first); the data dir stays. */
  async down(): Promise<void> {
    await this.sim?.stop();
    this.sim = null;
    await this.gw.close();
  }

  /** A restart on the same data dir (optionally with another clock). */
  async restart(opts: HarnessOptions = this.opts): Promise<void> {
    await this.down();
    Object.assign(this.opts, opts);
    await this.up();
  }

  async call(method: string, path: string, body?: unknown, extra: { key?: string; idem?: string } = {}): Promise<Res> {
    const headers: Record<string, string> = { authorization: `Bearer ${extra.key ?? this.seed.key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (extra.idem !== undefined) headers['idempotency-key'] = extra.idem;
    const res = await fetch(`${this.gw.httpUrl}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, json: text === '' ? null : JSON.parse(text) };
  }

  /** POST /v1/agent/<tool> with org_id and fleet_id filled in; an Idempotency-Key unless `idem` is null. */
  tool(name: string, body: Record<string, unknown>, extra: { key?: string; idem?: string | null } = {}): Promise<Res> {
    const idem = extra.idem === null ? undefined : (extra.idem ?? randomUUID());
    return this.call('POST', `/v1/agent/${name}`, { org_id: this.seed.orgId, fleet_id: this.seed.fleetId, ...body }, { ...(extra.key ? { key: extra.key } : {}), ...(idem ? { idem } : {}) });
  }

  /** Creates a feature and an enabled template; starts the operation unless told not to. */
  async template(body: Record<string, unknown> = {}, start = true): Promise<string> {
    const base = `/v1/orgs/${this.seed.orgId}/fleets/${this.seed.fleetId}`;
    const feature = await this.call('POST', `${base}/features`, {
      name: 'lawn',
      geometry: { type: 'Polygon', coordinates: [[[8.0, 47.0], [8.001, 47.0], [8.001, 47.001], [8.0, 47.0]]] },
    }, { idem: randomUUID() });
    if (feature.status !== 201) throw new Error(`feature: ${feature.status} ${JSON.stringify(feature.json)}`);
    const t = await this.call('POST', `${base}/mission-templates`, {
      name: 'mow',
      featureId: feature.json.featureId,
      steps: [{ kind: 'wait', config: { seconds: 0.3 } }, { kind: 'wait', config: { seconds: 0.3 } }],
      ...body,
    }, { idem: randomUUID() });
    if (t.status !== 201) throw new Error(`template: ${t.status} ${JSON.stringify(t.json)}`);
    if (start) await this.operation('start');
    return t.json.missionId as string;
  }

  async featureId(): Promise<string> {
    const base = `/v1/orgs/${this.seed.orgId}/fleets/${this.seed.fleetId}`;
    const feature = await this.call('POST', `${base}/features`, {
      name: 'job-area',
      geometry: { type: 'Polygon', coordinates: [[[8.0, 47.0], [8.001, 47.0], [8.001, 47.001], [8.0, 47.0]]] },
    }, { idem: randomUUID() });
    return feature.json.featureId as string;
  }

  async operation(action: string, extra: Record<string, unknown> = {}): Promise<Res> {
    const r = await this.tool('control-operation', { action, ...extra }, { idem: null });
    if (r.status >= 300) throw new Error(`control-operation ${action}: ${r.status} ${JSON.stringify(r.json)}`);
    return r;
  }

  async schedule(id: string): Promise<Record<string, any>> {  
    const r = await this.call('GET', `/v1/mission-schedule?fleet_id=${this.seed.fleetId}&id=${id}`);
    if (r.status !== 200) throw new Error(`schedule: ${r.status}`);
    return r.json;
  }

  async eventKinds(correlationId: string): Promise<string[]> {
    const r = await this.call('GET', `/v1/events?fleet_id=${this.seed.fleetId}&correlation_id=${correlationId}&limit=1000`);
    return (r.json.items as { kind: string }[]).map((e) => e.kind);
  }

  /** Waits until every robot is connected. */
  async robotsOnline(ms = 10_000): Promise<void> {
    await until(() => this.seed.robots.every((r) => this.link.link.isOnline(r.robotId)), ms, 'robots online');
  }

  /** Stops everything and deletes the data dir. */
  async close(): Promise<void> {
    await this.down();
    rmSync(this.seed.dir, { recursive: true, force: true });
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` (sync or async) every 20 ms until true. */
export async function until(cond: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what} not met within ${ms} ms`);
    await sleep(20);
  }
}
