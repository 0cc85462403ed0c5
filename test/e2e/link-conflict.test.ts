/**
 * Cloned robot credentials (issue 8, item 2), through the real `fleetgw serve` process (dist: `npm
 * run build` first) with robots as separate processes running the agent:
 *
 * - two processes with ONE robot token: the gateway detects the conflict, records
 *   `robot.link_conflict` on the robot's event timeline, shows `linkConflict` in GET /v1/robots and
 *   GET /v1/robots/{id}, stops the flapping (the live process keeps the link, the other is refused
 *   with ALREADY_EXISTS), answers stops with `delivery.linkConflict: true` (never a clean
 *   `agent_received`), refuses motion commands, and clears once the second process is gone;
 * - two processes sending the SAME instance id (a cloned machine id) are detected too (rule
 *   `instance_shared`), with the same guarantees;
 * - commands sent between the takeover that leads to detection and the detection itself are flagged
 *   `linkConflict: true` on their record and audit entry after the fact;
 * - one robot reconnecting after a network blip (new port, old session still live at the gateway)
 *   and one restarted while its old connection lingers are NOT flagged.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { status } from '@grpc/grpc-js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

const AGENT_MODULE = fileURLToPath(new URL('../../dist/agent/index.js', import.meta.url));

// A robot process: reports its agent's instance id, every connect / disconnect (with the status) and
// every command it receives on stdout.
const ROBOT_PROCESS = `
const { RobotAgent } = await import(process.env.AGENT_MODULE);
const cfg = JSON.parse(process.env.ROBOT_CFG);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const agent = new RobotAgent({
  address: cfg.address, robotId: cfg.robotId, robotToken: cfg.robotToken,
  dedicatedConnection: true, reconnect: cfg.reconnect ?? { initialMs: 50, maxMs: 200 }, instanceId: cfg.instanceId,
  onConnected: () => out({ event: 'connected' }),
  onDisconnected: (r) => out({ event: 'disconnected', code: r.code, details: r.details }),
  onCommand: (cmd) => { out({ event: 'received', commandId: cmd.commandId }); return { accept: true }; },
});
out({ event: 'started', instanceId: agent.instanceId });
agent.start();
process.once('SIGTERM', () => { void agent.stop().then(() => process.exit(0)); });
`;

interface Line {
  event: string;
  instanceId?: string;
  code?: number;
  details?: string;
  commandId?: string;
}

interface RobotProcess {
  proc: ChildProcess;
  lines: Line[];
  instanceId: () => string;
  count: (event: string) => number;
}

const dirs: string[] = [];
const running: { gw: RunningGateway[]; procs: ChildProcess[]; servers: net.Server[] } = { gw: [], procs: [], servers: [] };

afterEach(async () => {
  for (const p of running.procs.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const s of running.servers.splice(0)) s.close();
  for (const g of running.gw.splice(0)) await g.stop('SIGKILL');
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface RobotCfg {
  address: string;
  robotId: string;
  robotToken: string;
  /** Fixed instance id (clones of one machine id); default a random one per agent. */
  instanceId?: string;
  reconnect?: { initialMs: number; maxMs: number };
}

function robotProcess(cfg: RobotCfg): RobotProcess {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', ROBOT_PROCESS], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, AGENT_MODULE, ROBOT_CFG: JSON.stringify(cfg) },
  });
  running.procs.push(proc);
  const lines: Line[] = [];
  createInterface({ input: proc.stdout }).on('line', (l) => lines.push(JSON.parse(l) as Line));
  return {
    proc,
    lines,
    instanceId: () => lines.find((l) => l.event === 'started')?.instanceId ?? '',
    count: (event) => lines.filter((l) => l.event === event).length,
  };
}

async function setup(env: NodeJS.ProcessEnv): Promise<{ gw: RunningGateway; d: ReturnType<typeof makeDataDir>; cred: { robotId: string; robotToken: string } }> {
  const d = makeDataDir('fleetgw-conflict-');
  dirs.push(d.dataDir);
  const cred = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r0']);
  const gw = await startGatewayProcess(d.dataDir, ['--insecure-http'], env);
  running.gw.push(gw);
  return { gw, d, cred };
}

interface EventItem {
  kind: string;
  subject: { type: string; id: string };
  data: Record<string, any>;
}

async function robotEvents(gw: RunningGateway, d: ReturnType<typeof makeDataDir>, robotId: string): Promise<EventItem[]> {
  const res = await api(gw.ready.http, d.apiKey, `/v1/events?fleet_id=${d.fleetId}&correlation_id=${robotId}`);
  expect(res.status).toBe(200);
  return res.body.items as EventItem[];
}

function control(gw: RunningGateway, d: ReturnType<typeof makeDataDir>, robotId: string, action: string): Promise<{ status: number; body: any }> {
  return api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
    method: 'POST',
    body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action, robot_id: robotId, wait_for_ack_ms: 5000 }),
  });
}

describe('two processes with one robot token', () => {
  it('are detected, recorded, shown in REST, stop flapping, and stops are not reported as cleanly delivered', async () => {
    const { gw, d, cred } = await setup({ FLEETGW_LINK_CONFLICT_CLEAR_MS: '3000' });
    const a = robotProcess({ address: gw.ready.grpc, ...cred });
    await until(() => a.count('connected') === 1, 10_000, 'first process connected');
    const b = robotProcess({ address: gw.ready.grpc, ...cred });

    // Detected and recorded on the robot's own timeline.
    await until(async () => (await robotEvents(gw, d, cred.robotId)).some((e) => e.kind === 'robot.link_conflict'), 10_000, 'robot.link_conflict event');
    const event = (await robotEvents(gw, d, cred.robotId)).find((e) => e.kind === 'robot.link_conflict')!;
    expect(event.subject).toEqual({ type: 'robot', id: cred.robotId });
    const ids = [a.instanceId(), b.instanceId()];
    expect(ids).toContain(event.data.holder.instanceId);
    expect(ids).toContain(event.data.refused.instanceId);
    expect(event.data.holder.instanceId).not.toBe(event.data.refused.instanceId);
    const [holder, other] = event.data.holder.instanceId === a.instanceId() ? [a, b] : [b, a];

    // Shown in both REST robot reads (published schema field).
    const one = await api(gw.ready.http, d.apiKey, `/v1/robots/${cred.robotId}`);
    expect(one.status).toBe(200);
    expect(one.body.online).toBe(true);
    expect(one.body.linkConflict).toMatchObject({ sinceMs: expect.any(Number), refusedConnections: expect.any(Number), lastRefusedAtMs: expect.any(Number) });
    expect(one.body.linkConflict.refusedConnections).toBeGreaterThanOrEqual(1);
    const list = await api(gw.ready.http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`);
    expect(list.body.find((r: { id: string }) => r.id === cred.robotId).linkConflict).toMatchObject({ sinceMs: one.body.linkConflict.sinceMs });

    // The rule holds: no more flapping. The holder keeps its one stream; the other keeps being refused.
    await until(() => holder.count('connected') === holder.count('disconnected') + 1 && other.count('disconnected') > 0, 10_000, 'the holder connected and the other refused');
    const before = { holderConnects: holder.count('connected'), holderDrops: holder.count('disconnected'), otherConnects: other.count('connected'), otherDrops: other.count('disconnected') };
    // Four more refusals of the other (it retries on its backoff) span the time a flap would need.
    await until(() => other.count('disconnected') >= before.otherDrops + 4, 15_000, 'four more refusals of the other process');
    expect(holder.count('connected')).toBe(before.holderConnects);
    expect(holder.count('disconnected')).toBe(before.holderDrops);
    expect(other.count('connected')).toBe(before.otherConnects);
    const refusals = other.lines.filter((l) => l.event === 'disconnected').slice(before.otherDrops);
    expect(refusals.length).toBeGreaterThan(3);
    for (const r of refusals) {
      expect(r.code).toBe(status.ALREADY_EXISTS);
      expect(r.details).toMatch(/link conflict/);
    }
    const later = await api(gw.ready.http, d.apiKey, `/v1/robots/${cred.robotId}`);
    expect(later.body.linkConflict.refusedConnections).toBeGreaterThan(one.body.linkConflict.refusedConnections);

    // Stops during the conflict: acknowledged by the holder only, and never reported as a clean delivery.
    const stopIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await control(gw, d, cred.robotId, 'stop');
      expect(res.status).toBe(200);
      const delivery = res.body.outcomes[0].delivery;
      expect(delivery).toMatchObject({ state: 'agent_received', linkConflict: true });
      stopIds.push(delivery.commandId as string);
    }
    const got = (p: RobotProcess): string[] => p.lines.filter((l) => l.event === 'received').map((l) => l.commandId ?? '');
    expect(got(holder)).toEqual(expect.arrayContaining(stopIds));
    expect(got(other)).toEqual([]);
    const read = await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${stopIds[0]}`);
    expect(read.body.delivery).toMatchObject({ state: 'agent_received', linkConflict: true });
    expect(read.body.linkConflict).toBe(true);

    // A motion command could move the wrong machine: refused while conflicted, nothing sent.
    const start = await control(gw, d, cred.robotId, 'start');
    expect(start.status).toBe(502);
    expect(start.body.outcomes[0]).toMatchObject({ success: false, error: { code: 'conflict', message: expect.stringMatching(/link conflict/) } });
    expect(got(holder)).toHaveLength(stopIds.length);

    // The second process goes away: the conflict clears after the quiet time, visibly.
    other.proc.kill('SIGKILL');
    await until(async () => (await robotEvents(gw, d, cred.robotId)).some((e) => e.kind === 'robot.link_conflict_cleared'), 10_000, 'robot.link_conflict_cleared event');
    const cleared = await api(gw.ready.http, d.apiKey, `/v1/robots/${cred.robotId}`);
    expect(cleared.body.linkConflict).toBeNull();
    expect(cleared.body.online).toBe(true);
    const after = await control(gw, d, cred.robotId, 'stop');
    expect(after.body.outcomes[0].delivery.state).toBe('agent_received');
    expect(after.body.outcomes[0].delivery).not.toHaveProperty('linkConflict');
    expect(holder.count('disconnected')).toBe(before.holderDrops);
  }, 60_000);
});

describe('two processes with one robot token and one instance id', () => {
  it('are detected (instance_shared), stop flapping, and stops are flagged', async () => {
    const { gw, d, cred } = await setup({});
    const instanceId = 'machine-id-cloned-0001';
    const a = robotProcess({ address: gw.ready.grpc, ...cred, instanceId });
    await until(() => a.count('connected') === 1, 10_000, 'first process connected');
    const b = robotProcess({ address: gw.ready.grpc, ...cred, instanceId });

    await until(async () => (await robotEvents(gw, d, cred.robotId)).some((e) => e.kind === 'robot.link_conflict'), 10_000, 'robot.link_conflict event');
    const event = (await robotEvents(gw, d, cred.robotId)).find((e) => e.kind === 'robot.link_conflict')!;
    expect(event.data.rule).toBe('instance_shared');
    expect(event.data.holder.instanceId).toBe(instanceId);
    expect(event.data.refused.instanceId).toBe(instanceId);
    expect(event.data.holder.peer).not.toBe(event.data.refused.peer);
    const one = await api(gw.ready.http, d.apiKey, `/v1/robots/${cred.robotId}`);
    expect(one.body.linkConflict).toMatchObject({ refusedConnections: expect.any(Number) });

    // No more flapping: one process keeps its stream, the other is refused with ALREADY_EXISTS.
    const lastDrop = (p: RobotProcess): Line | undefined => p.lines.filter((l) => l.event === 'disconnected').at(-1);
    const connectedNow = (p: RobotProcess): boolean => p.count('connected') === p.count('disconnected') + 1;
    await until(() => [[a, b], [b, a]].some(([r, h]) => lastDrop(r!)?.code === status.ALREADY_EXISTS && connectedNow(h!)), 10_000, 'one process holding the stream and the other refused');
    const refused = lastDrop(a)?.code === status.ALREADY_EXISTS ? a : b;
    const holder = refused === a ? b : a;
    const counts = (): number[] => [a.count('connected'), b.count('connected'), holder.count('disconnected'), refused.count('disconnected')];
    const before = counts();
    // Four more refusals (the refused process retries on its backoff) span the time a flap would need.
    await until(() => refused.count('disconnected') > (before[3] ?? 0) + 3, 15_000, 'four more refusals');
    const after = counts();
    expect(after.slice(0, 3)).toEqual(before.slice(0, 3));
    expect(after[3]).toBeGreaterThan((before[3] ?? 0) + 3);
    expect(lastDrop(refused)).toMatchObject({ code: status.ALREADY_EXISTS, details: expect.stringMatching(/link conflict/) });

    const stop = await control(gw, d, cred.robotId, 'stop');
    expect(stop.body.outcomes[0].delivery).toMatchObject({ state: 'agent_received', linkConflict: true });
    const got = (p: RobotProcess): string[] => p.lines.filter((l) => l.event === 'received').map((l) => l.commandId ?? '');
    expect(got(holder)).toContain(stop.body.outcomes[0].delivery.commandId);
    expect(got(refused)).not.toContain(stop.body.outcomes[0].delivery.commandId);
    expect((await control(gw, d, cred.robotId, 'start')).status).toBe(502);
  }, 60_000);
});

describe('commands sent in the round before detection', () => {
  it('are flagged linkConflict on their record and audit entry once the conflict is detected', async () => {
    const { gw, d, cred } = await setup({});
    // The first process comes back 1-2 s after it is replaced: a wide, known first round.
    const a = robotProcess({ address: gw.ready.grpc, ...cred, reconnect: { initialMs: 2000, maxMs: 2000 } });
    await until(() => a.count('connected') === 1, 10_000, 'first process connected');
    const b = robotProcess({ address: gw.ready.grpc, ...cred });
    await until(() => b.count('connected') === 1 && a.count('disconnected') === 1, 10_000, 'second process took over');

    // Sent after the takeover, before detection: answered as plainly delivered (nobody knows yet).
    const early = await control(gw, d, cred.robotId, 'stop');
    expect(early.status).toBe(200);
    const delivery = early.body.outcomes[0].delivery;
    expect(delivery.state).toBe('agent_received');
    expect(delivery).not.toHaveProperty('linkConflict');
    expect((await robotEvents(gw, d, cred.robotId)).filter((e) => e.kind === 'robot.link_conflict')).toEqual([]);

    await until(async () => (await robotEvents(gw, d, cred.robotId)).some((e) => e.kind === 'robot.link_conflict'), 10_000, 'robot.link_conflict event');
    // Flagged after the fact: the command read and its audit entry.
    await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${delivery.commandId}`)).body.linkConflict === true, 5000, 'command flagged');
    const read = await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${delivery.commandId}`);
    expect(read.body.delivery).toMatchObject({ state: 'agent_received', linkConflict: true });
    const audit = await api(gw.ready.http, d.apiKey, `/v1/audit-log?fleet_id=${d.fleetId}&robot_id=${cred.robotId}`);
    expect(audit.status).toBe(200);
    const entry = (audit.body.items as { commandId: string; linkConflict?: boolean }[]).find((e) => e.commandId === delivery.commandId);
    expect(entry?.linkConflict).toBe(true);
    // The event says from when commands may have reached either process: before this stop, after the first process connected.
    const event = (await robotEvents(gw, d, cred.robotId)).find((e) => e.kind === 'robot.link_conflict')!;
    const created = (entry as unknown as { createdAtMs: number }).createdAtMs;
    expect(event.data.suspectSinceMs).toBeLessThanOrEqual(created);
    expect(event.data.suspectSinceMs).toBeGreaterThan(created - 5000);
  }, 60_000);
});

/**
 * A TCP proxy whose connections can be frozen: bytes stop flowing both ways and the gateway side
 * stays open, as when a robot's network drops without a FIN or RST. The gateway keeps that session
 * until its keepalive fails, so a reconnect meanwhile meets a session that still looks live.
 */
async function startFreezingProxy(target: string): Promise<{ address: string; freeze(opts: { closeClientSide: boolean }): void; lingering(): number }> {
  const port = Number(target.slice(target.lastIndexOf(':') + 1));
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket; frozen: boolean }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    const pair = { client, upstream, frozen: false };
    pairs.add(pair);
    client.on('data', (c: Buffer) => {
      if (!pair.frozen) upstream.write(c);
    });
    upstream.on('data', (c: Buffer) => {
      if (!pair.frozen) client.write(c);
    });
    client.on('error', () => {});
    upstream.on('error', () => {});
    client.on('close', () => {
      if (!pair.frozen) upstream.destroy();
    });
    upstream.on('close', () => {
      client.destroy();
      pairs.delete(pair);
    });
  });
  running.servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    freeze: ({ closeClientSide }) => {
      for (const p of pairs) {
        if (p.frozen) continue;
        p.frozen = true;
        if (closeClientSide) p.client.destroy();
      }
    },
    /** Frozen connections the gateway has not closed yet. */
    lingering: () => [...pairs].filter((p) => p.frozen).length,
  };
}

describe('one robot reconnecting is not a conflict', () => {
  it('a reconnect from a new port after a blip, and a restart while the old connection lingers, are not flagged', async () => {
    const { gw, d, cred } = await setup({});
    const proxy = await startFreezingProxy(gw.ready.grpc);
    const replacements = (): number => gw.stderr().split('\n').filter((l) => l.includes(`robot ${cred.robotId}: newer connection replaces`)).length;

    const first = robotProcess({ address: proxy.address, ...cred });
    await until(() => first.count('connected') === 1, 10_000, 'robot connected');
    // Three network blips: the agent reconnects over a new TCP connection (new port) while the gateway
    // still holds the old session; the same process comes back, so it simply replaces it.
    for (let i = 2; i <= 4; i++) {
      proxy.freeze({ closeClientSide: true });
      await until(() => first.count('connected') === i, 10_000, `reconnect ${i - 1}`);
    }
    // The old sessions were still live at the gateway: the case under test. (Its log may trail the robot's.)
    await until(() => replacements() === 3, 5000, 'three replacements logged');

    // The robot restarts (a new process, a new instance id) while its last connection still lingers.
    proxy.freeze({ closeClientSide: false });
    first.proc.kill('SIGKILL');
    await new Promise((r) => first.proc.once('exit', r));
    const second = robotProcess({ address: proxy.address, ...cred });
    await until(() => second.count('connected') === 1, 10_000, 'restarted robot connected');
    await until(() => replacements() === 4, 5000, 'the restart replaced the lingering session');
    // And blips once more after the restart.
    proxy.freeze({ closeClientSide: true });
    await until(() => second.count('connected') === 2, 10_000, 'restarted robot reconnected');

    // The lingering sessions end by keepalive (2 s + 2 s) without taking the robot offline: the
    // gateway closes each frozen connection's upstream side.
    await until(() => proxy.lingering() === 0, 20_000, 'the gateway to close the lingering connections');
    expect(replacements()).toBe(5);
    expect(second.count('connected')).toBe(2);
    expect(second.count('disconnected')).toBe(1);
    const view = await api(gw.ready.http, d.apiKey, `/v1/robots/${cred.robotId}`);
    expect(view.body.online).toBe(true);
    expect(view.body.linkConflict).toBeNull();
    expect((await robotEvents(gw, d, cred.robotId)).filter((e) => e.kind.startsWith('robot.link_conflict'))).toEqual([]);
    const stop = await control(gw, d, cred.robotId, 'stop');
    expect(stop.status).toBe(200);
    expect(stop.body.outcomes[0].delivery.state).toBe('agent_received');
    expect(stop.body.outcomes[0].delivery).not.toHaveProperty('linkConflict');
  }, 60_000);
});
