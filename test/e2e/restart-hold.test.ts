/**
 * Planned gateway restarts, through the real processes (`fleetgw serve`, `fleetgw sim`; dist: `npm run
 * build` first):
 *
 * - SIGTERM tells every connected robot to hold its link-loss reaction (GatewayRestarting); the
 *   gateway stays down longer than the robots' link-loss time, starts again on the same ports and
 *   data dir, and no robot that got the notice has paused itself. A robot whose agent ignores the
 *   notice (`--max-restart-hold-ms 0`, as an agent older than the notice) pauses as before; its pause
 *   is what tells the test the gap outlasted the link-loss time. Stops a client issues during the gap
 *   (retried with an Idempotency-Key until the gateway answers) are each applied exactly once.
 * - kill -9 (an unplanned loss, no notice): every robot pauses itself after its link-loss time.
 *
 * RESTART_HOLD_ROBOTS sets the fleet size (default 100, the figure docs/operations.md quotes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { SimFleetStats } from '../../src/sim/fleet.js';
import { addRobot } from '../../src/store/identity.js';
import { openStore } from '../../src/store/lmdb.js';
import { FLEETGW_BIN, fleetgw } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

const ROBOTS = Number(process.env.RESTART_HOLD_ROBOTS ?? 100);
const LINK_LOSS_MS = 1500;

type Depot = ReturnType<typeof makeDataDir> & { robots: { robotId: string; robotToken: string }[] };

interface Sim {
  proc: ChildProcess;
  /** The sim's log so far (stderr, JSON lines). */
  log: () => string;
  stop(): Promise<SimFleetStats>;
}

const dirs: string[] = [];
const running: { gw: RunningGateway[]; procs: ChildProcess[] } = { gw: [], procs: [] };

afterEach(async () => {
  for (const p of running.procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const g of running.gw.splice(0)) await g.stop('SIGKILL');
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A data dir with `count` robots, provisioned straight into LMDB (no process start per robot). */
async function depot(count: number): Promise<Depot> {
  const d = makeDataDir('fleetgw-restart-');
  dirs.push(d.dataDir);
  const store = openStore(d.dataDir);
  const robots: Depot['robots'] = [];
  try {
    for (let i = 0; i < count; i++) {
      const r = addRobot(store, { fleetId: d.fleetId, name: `r-${i}`, capabilities: ['stop'], active: true });
      robots.push({ robotId: r.record.robotId, robotToken: r.robotToken });
    }
  } finally {
    await store.close();
  }
  return { ...d, robots };
}

async function gateway(d: Depot, ports: { http: number; grpc: number }): Promise<RunningGateway> {
  const gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--port', String(ports.http), '--grpc-port', String(ports.grpc)]);
  running.gw.push(gw);
  return gw;
}

function sim(d: Depot, name: string, robots: Depot['robots'], grpc: string, extra: string[] = []): Sim {
  const file = join(d.dataDir, `${name}.json`);
  writeFileSync(file, JSON.stringify(robots), { mode: 0o600 });
  const proc = spawn(process.execPath, [FLEETGW_BIN, 'sim', '--grpc', grpc, '--robots-file', file, '--hz', '2',
    '--stop-on-link-loss-ms', String(LINK_LOSS_MS), '--log-format', 'json', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.procs.push(proc);
  let log = '';
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (s: string) => {
    log += s;
  });
  let stats: SimFleetStats | null = null;
  createInterface({ input: proc.stdout }).on('line', (line) => {
    const msg = JSON.parse(line) as { event?: string } & SimFleetStats;
    if (msg.event === 'sim-stopped') stats = msg;
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    proc,
    log: () => log,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
      if (stats === null) throw new Error(`fleetgw sim printed no sim-stopped line; stderr:\n${log.slice(-2000)}`);
      return stats;
    },
  };
}

const count = (text: string, needle: string): number => text.split(needle).length - 1;

async function robotViews(gw: RunningGateway, d: Depot): Promise<{ id: string; online: boolean; mode: string | null }[]> {
  const res = await api(gw.ready.http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`);
  expect(res.status).toBe(200);
  return res.body as { id: string; online: boolean; mode: string | null }[];
}

async function allOnline(gw: RunningGateway, d: Depot): Promise<boolean> {
  return (await robotViews(gw, d)).every((r) => r.online);
}

/**
 * Robots count their link-loss time from start(), so on a loaded machine some pause before their first
 * connect: start those again (the state under test is "driving when the gateway stops"). Returns how
 * many paused at start-up (per sim log: `current` and `legacy`, by robot id) and how many starts went out.
 */
async function unpause(gw: RunningGateway, d: Depot, legacyIds: string[] = []): Promise<{ starts: number; stoppedAtStart: number; legacyStoppedAtStart: number }> {
  await until(async () => (await robotViews(gw, d)).every((r) => r.mode !== null), 30_000, 'every robot reporting its mode');
  const paused = (await robotViews(gw, d)).filter((r) => r.mode === 'paused').map((r) => r.id);
  // At most 100 targets a request.
  for (let i = 0; i < paused.length; i += 100) {
    const res = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'start', robot_ids: paused.slice(i, i + 100), wait_for_ack_ms: 10_000 }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
  await until(async () => (await robotViews(gw, d)).every((r) => r.mode !== 'paused'), 30_000, 'no robot paused');
  const legacyPaused = paused.filter((id) => legacyIds.includes(id)).length;
  return { starts: paused.length - legacyPaused, stoppedAtStart: paused.length - legacyPaused, legacyStoppedAtStart: legacyPaused };
}

function stopRequest(d: Depot, robotId: string, key: string): RequestInit {
  return {
    method: 'POST',
    headers: { 'idempotency-key': key },
    body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: robotId, wait_for_ack_ms: 1 }),
  };
}

interface Issued {
  robotId: string;
  key: string;
  refusedAttempts: number;
  outcome: { robotId: string; delivery: { state: string; commandId: string } };
}

/** Sends one stop, retrying every 50 ms while the gateway refuses connections. */
async function issueUntilAnswered(base: string, d: Depot, robotId: string): Promise<Issued> {
  const key = randomUUID();
  let refusedAttempts = 0;
  for (;;) {
    try {
      const res = await api(base, d.apiKey, '/v1/agent/control-robot', stopRequest(d, robotId, key));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return { robotId, key, refusedAttempts, outcome: res.body.outcomes[0] };
    } catch (err: unknown) {
      if (!(err instanceof TypeError)) throw err;
      refusedAttempts++;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('planned gateway restart', () => {
  it(`SIGTERM, a gap longer than the link-loss time, start again: 0 of ${ROBOTS} robots paused, stops issued during the gap applied once`, async () => {
    const d = await depot(ROBOTS + 1);
    const fleet = d.robots.slice(0, ROBOTS);
    const old = d.robots.slice(ROBOTS);
    const ports = { http: await freePort(), grpc: await freePort() };
    let gw = await gateway(d, ports);
    const current = sim(d, 'current', fleet, gw.ready.grpc);
    const legacy = sim(d, 'legacy', old, gw.ready.grpc, ['--max-restart-hold-ms', '0']);
    await until(() => allOnline(gw, d), 60_000, 'every robot online');
    const started = await unpause(gw, d, old.map((r) => r.robotId));

    expect(await gw.stop('SIGTERM')).toBe(0);
    running.gw.splice(running.gw.indexOf(gw), 1);
    expect(gw.stderr()).toContain(`told ${ROBOTS + 1} robot(s) to hold for 60000 ms`);
    // The robot that ignores the notice pausing is the proof that the gap outlasted the link-loss time.
    await until(() => count(legacy.log(), 'link lost, stopping') === 1 + started.legacyStoppedAtStart, 30_000, 'the legacy robot to pause on link loss');

    // During the gap: a client stops every other robot, one request each with its own Idempotency-Key,
    // retrying while the gateway does not answer (the way a client rides out a restart).
    const base = `http://127.0.0.1:${ports.http}`;
    const targets = fleet.filter((_r, i) => i % 2 === 0).map((r) => r.robotId);
    const issued = targets.map((robotId) => issueUntilAnswered(base, d, robotId));
    gw = await gateway(d, ports);
    const answers = await Promise.all(issued);
    // Each was first tried while the gateway was down.
    for (const a of answers) expect(a.refusedAttempts).toBeGreaterThan(0);
    const outcomes = answers.map((a) => a.outcome);
    const states = new Map<string, number>();
    for (const o of outcomes) states.set(o.delivery.state, (states.get(o.delivery.state) ?? 0) + 1);
    console.log(`restart-hold: stops issued during the gap, first answers: ${JSON.stringify(Object.fromEntries(states))}`);
    // A client that lost an answer retries with the same key: it gets the same command, not a second one.
    const again = await api(base, d.apiKey, '/v1/agent/control-robot', stopRequest(d, answers[0]!.robotId, answers[0]!.key));
    expect(again.body.outcomes[0].delivery.commandId).toBe(answers[0]!.outcome.delivery.commandId);

    await until(() => allOnline(gw, d), 60_000, 'every robot back online');
    for (const o of outcomes) {
      await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${o.delivery.commandId}`)).body.state === 'agent_received', 30_000, `stop ${o.delivery.commandId} acknowledged`);
    }
    const views = new Map((await robotViews(gw, d)).map((r) => [r.id, r]));
    await until(async () => {
      const now = new Map((await robotViews(gw, d)).map((r) => [r.id, r]));
      return targets.every((id) => now.get(id)!.mode === 'paused');
    }, 30_000, 'the stopped robots to report paused');
    expect(views.size).toBe(ROBOTS + 1);

    const cur = await current.stop();
    const leg = await legacy.stop();
    expect(count(current.log(), 'link lost, stopping')).toBe(started.stoppedAtStart);
    expect(cur.linkLossStops).toBe(started.stoppedAtStart);
    expect(cur.restartHolds).toBe(ROBOTS);
    expect(cur.commandsApplied).toBe(targets.length + started.starts);
    expect(cur.duplicateCommands).toBe(0);
    expect(leg.restartHolds).toBe(0);
    expect(count(legacy.log(), 'link lost, stopping')).toBe(1 + started.legacyStoppedAtStart);
    const after = await robotViews(gw, d);
    const untouched = fleet.filter((_r, i) => i % 2 === 1).map((r) => r.robotId);
    for (const id of untouched) expect(after.find((r) => r.id === id)!.mode).not.toBe('paused');
  }, 240_000);

  it('--restart-grace-s is checked at start: a whole number of seconds from 0 to 300', () => {
    for (const bad of ['301', '1.5', 'soon', '3000']) {
      const r = fleetgw(['serve', '--data-dir', '/nonexistent-fleetgw-dir', '--restart-grace-s', bad]);
      expect(r.status, bad).toBe(2);
      expect(r.stderr).toContain('--restart-grace-s must be a whole number of seconds from 0 to 300');
    }
  });

  it('kill -9 (no notice): every robot still pauses itself after its link-loss time', async () => {
    const n = Math.min(ROBOTS, 10);
    const d = await depot(n);
    const ports = { http: await freePort(), grpc: await freePort() };
    let gw = await gateway(d, ports);
    const fleet = sim(d, 'fleet', d.robots, gw.ready.grpc);
    await until(() => allOnline(gw, d), 60_000, 'every robot online');

    await unpause(gw, d);
    expect(await gw.stop('SIGKILL')).toBeNull();
    running.gw.splice(running.gw.indexOf(gw), 1);
    const before = count(fleet.log(), 'link lost, stopping');
    await until(() => count(fleet.log(), 'link lost, stopping') === before + n, 30_000, 'every robot to pause on link loss');

    gw = await gateway(d, ports);
    await until(() => allOnline(gw, d), 60_000, 'every robot back online');
    await until(async () => (await robotViews(gw, d)).every((r) => r.mode === 'paused'), 30_000, 'every robot reporting paused');
    const stats = await fleet.stop();
    expect(stats).toMatchObject({ linkLossStops: before + n, restartHolds: 0 });
  }, 120_000);
});
