/**
 * Kill tests for command delivery, through the real `fleetgw serve` process (dist: `npm run build`
 * first) and robots on the real gRPC link:
 *
 * - a robot process SIGKILLed between receiving a command and acking it, then restarted: the
 *   command is applied at most once. "Applied" is what the robot's handler did to the machine; a
 *   robot records the seq of each command it applies in its own storage, atomically with applying
 *   it, and hands that back to the new agent as `lastAppliedSeq` (here: an fsync'd log file).
 * - the gateway SIGKILLed while deferred commands wait for offline robots: after the restart every
 *   one is delivered, in order per robot, none applied twice (and a second crash later resends
 *   nothing that was acknowledged).
 * - stop on link loss: a simulated robot pauses itself once the gateway has been gone for the
 *   configured time, and `fleetgw sim` does so by default.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import type { Command } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { runSimFleet } from '../../src/sim/index.js';
import { adminJson, FLEETGW_BIN } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until, sleep } from '../support/until.js';

const AGENT_MODULE = fileURLToPath(new URL('../../dist/agent/index.js', import.meta.url));

// A robot in its own process: its handler reports each command on stdout, then (mode permitting)
// applies it, which here means appending {commandId, seq} to an fsync'd log: the machine's effect and
// the robot's persistent "last applied seq" in one durable step.
const ROBOT_PROCESS = `
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
const { RobotAgent } = await import(process.env.AGENT_MODULE);
const cfg = JSON.parse(process.env.ROBOT_CFG);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const agent = new RobotAgent({
  address: cfg.address, robotId: cfg.robotId, robotToken: cfg.robotToken, lastAppliedSeq: BigInt(cfg.lastAppliedSeq),
  dedicatedConnection: true, reconnect: { initialMs: 50, maxMs: 200 },
  onConnected: () => out({ event: 'connected' }),
  onCommand: (cmd) => {
    out({ event: 'received', commandId: cmd.commandId, seq: String(cmd.seq) });
    if (cfg.mode === 'hang-before-apply') return new Promise(() => {});
    const fd = openSync(cfg.appliedLog, 'a');
    writeSync(fd, JSON.stringify({ pid: process.pid, commandId: cmd.commandId, seq: String(cmd.seq) }) + '\\n');
    fsyncSync(fd);
    closeSync(fd);
    if (cfg.mode === 'apply-then-hang') return new Promise(() => {});
    return { accept: true };
  },
});
agent.start();
process.once('SIGTERM', () => { void agent.stop().then(() => process.exit(0)); });
`;

type Mode = 'normal' | 'hang-before-apply' | 'apply-then-hang';

interface RobotProcess {
  proc: ChildProcess;
  lines: Record<string, string>[];
}

const dirs: string[] = [];
const running: { gw: RunningGateway[]; procs: ChildProcess[]; agents: RobotAgent[] } = { gw: [], procs: [], agents: [] };

afterEach(async () => {
  for (const a of running.agents.splice(0)) await a.stop();
  for (const p of running.procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const g of running.gw.splice(0)) await g.stop('SIGKILL');
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function setup(robots: number): { d: ReturnType<typeof makeDataDir>; creds: { robotId: string; robotToken: string }[] } {
  const d = makeDataDir('fleetgw-safety-');
  dirs.push(d.dataDir);
  const creds = Array.from({ length: robots }, (_, i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`]));
  return { d, creds };
}

/** Starts the gateway on fixed ports, so robots reconnect to a restarted one by themselves. */
async function gateway(dataDir: string, ports: { http: number; grpc: number }): Promise<RunningGateway> {
  const gw = await startGatewayProcess(dataDir, ['--insecure-http', '--port', String(ports.http), '--grpc-port', String(ports.grpc)]);
  running.gw.push(gw);
  return gw;
}

async function kill(gw: RunningGateway): Promise<void> {
  expect(await gw.stop('SIGKILL')).toBeNull();
  running.gw.splice(running.gw.indexOf(gw), 1);
}

function robotProcess(cfg: { address: string; robotId: string; robotToken: string; lastAppliedSeq: string; mode: Mode; appliedLog: string }): RobotProcess {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', ROBOT_PROCESS], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, AGENT_MODULE, ROBOT_CFG: JSON.stringify(cfg) },
  });
  running.procs.push(proc);
  const lines: Record<string, string>[] = [];
  createInterface({ input: proc.stdout }).on('line', (l) => lines.push(JSON.parse(l) as Record<string, string>));
  return { proc, lines };
}

function appliedLog(file: string): { pid: number; commandId: string; seq: string }[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { pid: number; commandId: string; seq: string });
}

/** What a restarted robot reads back from its storage: the highest seq it applied. */
function persistedSeq(file: string): string {
  return appliedLog(file).reduce((m, e) => (BigInt(e.seq) > BigInt(m) ? e.seq : m), '0');
}

function control(gw: RunningGateway, d: ReturnType<typeof makeDataDir>, robotIds: string[], waitMs: number): Promise<{ status: number; body: any }> {
  return api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
    method: 'POST',
    body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_ids: robotIds, wait_for_ack_ms: waitMs }),
  });
}

/**
 * A stop sent now and acknowledged by every robot: it travels the same ordered stream as anything
 * the gateway sent these robots before, so once it is acknowledged a wrong resend would have
 * arrived too (what a check that nothing more arrives waits for). Returns its command id per robot.
 */
async function anchor(gw: RunningGateway, d: ReturnType<typeof makeDataDir>, robotIds: string[]): Promise<Map<string, string>> {
  const res = await control(gw, d, robotIds, 20_000);
  const outcomes = res.body.outcomes as { robotId: string; delivery: { state: string; commandId: string } }[];
  expect(outcomes.map((o) => o.delivery.state)).toEqual(robotIds.map(() => 'agent_received'));
  return new Map(outcomes.map((o) => [o.robotId, o.delivery.commandId]));
}

describe('robot killed between receiving a command and acking it', () => {
  for (const mode of ['hang-before-apply', 'apply-then-hang'] as const) {
    it(`${mode}: after a restart the command is applied exactly once and the caller's ack wait ends agent_received`, async () => {
      const { d, creds } = setup(1);
      const cred = creds[0]!;
      const gw = await gateway(d.dataDir, { http: await freePort(), grpc: await freePort() });
      const log = join(d.dataDir, 'robot-applied.log');
      writeFileSync(log, '');
      const first = robotProcess({ address: gw.ready.grpc, ...cred, lastAppliedSeq: '0', mode, appliedLog: log });
      await until(() => first.lines.some((l) => l.event === 'connected'), 10_000, 'first robot process connected');

      const pending = control(gw, d, [cred.robotId], 20_000);
      await until(() => first.lines.some((l) => l.event === 'received'), 10_000, 'command received');
      const received = first.lines.find((l) => l.event === 'received')!;
      if (mode === 'apply-then-hang') await until(() => appliedLog(log).length === 1, 5000, 'applied');
      first.proc.kill('SIGKILL');
      await new Promise((r) => first.proc.once('exit', r));
      expect(appliedLog(log)).toHaveLength(mode === 'apply-then-hang' ? 1 : 0);

      // The robot restarts with what it persisted: nothing applied, or the seq it applied.
      const second = robotProcess({ address: gw.ready.grpc, ...cred, lastAppliedSeq: persistedSeq(log), mode: 'normal', appliedLog: log });
      const res = await pending;
      expect(res.status).toBe(200);
      expect(res.body.outcomes[0].delivery).toMatchObject({ state: 'agent_received', commandId: received.commandId });
      const next = (await anchor(gw, d, [cred.robotId])).get(cred.robotId)!;
      const applied = appliedLog(log);
      expect(applied.map((e) => e.commandId)).toEqual([received.commandId, next]);
      // Before the crash: applied by the first process; otherwise by the second, on the resend.
      expect(applied[0]!.pid).toBe(mode === 'apply-then-hang' ? first.proc.pid : second.proc.pid);
      if (mode === 'apply-then-hang') {
        // The Hello's last applied seq settled it: the new process was not even sent it.
        expect(second.lines.filter((l) => l.event === 'received' && l.commandId !== next)).toHaveLength(0);
      }
    }, 60_000);
  }
});

describe('gateway SIGKILLed with deferred commands pending for offline robots', () => {
  it('delivers every deferred command after the restart, in order per robot, none applied twice', async () => {
    const ROBOTS = 4;
    const PER_ROBOT = 5;
    const { d, creds } = setup(ROBOTS);
    const ports = { http: await freePort(), grpc: await freePort() };
    let gw = await gateway(d.dataDir, ports);
    const expected = new Map<string, string[]>(creds.map((c) => [c.robotId, []]));
    for (let i = 0; i < PER_ROBOT; i++) {
      const res = await control(gw, d, creds.map((c) => c.robotId), 1);
      expect(res.status).toBe(200);
      for (const o of res.body.outcomes as { robotId: string; delivery: { state: string; commandId: string } }[]) {
        expect(o.delivery.state).toBe('deferred');
        expect.soft(o.delivery.commandId).toBeTypeOf('string');
        expected.get(o.robotId)!.push(o.delivery.commandId);
      }
    }
    await kill(gw); // no drain: what the HTTP answers promised must already be durable
    gw = await gateway(d.dataDir, ports);

    const applied = new Map<string, Command[]>(creds.map((c) => [c.robotId, []]));
    const agents = creds.map((c) => {
      const a = new RobotAgent({
        address: gw.ready.grpc, ...c, dedicatedConnection: true, reconnect: { initialMs: 50, maxMs: 200 },
        onCommand: (cmd) => {
          applied.get(c.robotId)!.push(cmd);
          return { accept: true };
        },
      });
      running.agents.push(a);
      a.start();
      return a;
    });
    await until(() => [...applied.values()].every((l) => l.length >= PER_ROBOT), 15_000, 'all deferred commands applied');
    await until(() => agents.every((a) => a.connected), 15_000, 'robots connected');
    for (const [robotId, id] of await anchor(gw, d, creds.map((c) => c.robotId))) expected.get(robotId)!.push(id);
    for (const c of creds) {
      const got = applied.get(c.robotId)!;
      expect(got.map((x) => x.commandId)).toEqual(expected.get(c.robotId));
      const seqs = got.map((x) => x.seq);
      expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!)).toBe(true);
    }

    // Once acknowledged, a second crash does not bring them back: the robots reconnect to the
    // restarted gateway by themselves and are sent nothing. (An ack whose lazy write the crash lost is
    // settled by the robot's Hello, not resent: applied-seq.ts.)
    await kill(gw);
    const connects = agents.map((a) => a.stats().connects);
    gw = await gateway(d.dataDir, ports);
    await until(() => agents.every((a, i) => a.connected && a.stats().connects > connects[i]!), 15_000, 'robots reconnected');
    await anchor(gw, d, creds.map((c) => c.robotId));
    for (const a of agents) expect(a.stats().duplicateCommands).toBe(0);
    expect([...applied.values()].map((l) => l.length)).toEqual(creds.map(() => PER_ROBOT + 2));
  }, 90_000);
});

describe('stop on link loss', () => {
  it('a simulated robot pauses itself once the gateway process has been gone for the configured time', async () => {
    const { d, creds } = setup(2);
    const gw = await gateway(d.dataDir, { http: await freePort(), grpc: await freePort() });
    const sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 20, stopOnLinkLossMs: 1500 });
    try {
      await until(() => sim.stats().connected === 2, 10_000, 'robots online');
      await until(() => sim.robots.every((r) => r.model.speedMps > 0.2), 10_000, 'robots moving');
      const killedAt = Date.now();
      await kill(gw);
      // Time-based on purpose (the robots' link-loss timer is what is tested): the first pause is
      // seen no earlier than the configured 1.5 s, a lower bound a loaded machine only makes later.
      await until(() => sim.robots.some((r) => r.model.mode === 'paused'), 10_000, 'a robot paused itself', 5);
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(1500);
      await until(() => sim.robots.every((r) => r.model.mode === 'paused'), 10_000, 'robots paused themselves');
      await until(() => sim.robots.every((r) => r.model.speedMps === 0), 5000, 'robots at rest');
    } finally {
      await sim.stop();
    }
  }, 60_000);

  it('`fleetgw sim` stops its robots on link loss by default (3 s); they stay paused after the link returns', async () => {
    const { d, creds } = setup(1);
    const ports = { http: await freePort(), grpc: await freePort() };
    let gw = await gateway(d.dataDir, ports);
    const sim = spawn(process.execPath, [FLEETGW_BIN, 'sim', '--grpc', gw.ready.grpc, '--robot-id', creds[0]!.robotId, '--robot-token', creds[0]!.robotToken, '--hz', '10'], { stdio: ['ignore', 'pipe', 'ignore'] });
    running.procs.push(sim);
    const started = await new Promise<Record<string, unknown>>((resolve) => {
      createInterface({ input: sim.stdout }).once('line', (l) => resolve(JSON.parse(l) as Record<string, unknown>));
    });
    expect(started).toMatchObject({ event: 'sim-started', stopOnLinkLossMs: 3000 });
    const view = async (): Promise<{ mode: string; speedMps: number; online: boolean }> => (await api(gw.ready.http, d.apiKey, `/v1/robots/${creds[0]!.robotId}`)).body;
    await until(async () => {
      const v = await view();
      return v.mode === 'autonomous' && v.speedMps > 0.2;
    }, 15_000, 'robot driving');
    await kill(gw);
    // Time-based on purpose: the gateway stays away longer than the sim's default link-loss time (3 s).
    await sleep(4000);
    gw = await gateway(d.dataDir, ports);
    await until(async () => (await view()).online, 15_000, 'robot back online');
    await until(async () => {
      const v = await view();
      return v.mode === 'paused' && v.speedMps === 0;
    }, 5000, 'robot reports itself paused');
  }, 60_000);
});
