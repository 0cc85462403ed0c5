/**
 * Issue 8 item 3: a stop the caller was told `agent_received` must survive a gateway kill -9, and a
 * stop the robot acknowledged must not be sent to it again after the restart.
 *
 * The real `fleetgw serve` (dist: `npm run build` first) on fixed ports, two robot agents in this
 * process that reconnect by themselves, and a stream of stops from four HTTP clients: one without a
 * wait, one stopping both robots in one request (bulk path) with `wait_for_ack`, two single stops
 * with `wait_for_ack`. Each cycle streams for a random time (150-600 ms), then a probe client, once
 * the stream is quiet (any other write would flush the gateway's held writes early and close the
 * window the kill aims at), makes the gateway SIGKILLed at one of two moments, alternately:
 *
 * - right after an `agent_received` answer arrives. Before the fix that answer left on the ack, and
 *   the record of a stop whose caller waits for the ack was written up to 5 ms later: missing after
 *   the restart in most such cycles (2 of 3 per run when this test was written).
 * - right after three stops to one robot were answered `dispatched` (so stored), which that robot
 *   takes SLOW_MS each to apply: its acks go to a dead stream, and after the restart all three are
 *   pending and at or below the last applied seq of the robot's Hello. Before the fix only the one
 *   equal to it was settled and the other two were sent to the robot again (every such cycle).
 *
 * After the restart and the robots' reconnect it checks, for the cycle's answers:
 * - every command answered `agent_received` has a record (`GET /v1/robot-commands/{id}`, state
 *   `agent_received`) and an audit entry (`GET /v1/audit-log`); every other answered command has a
 *   record;
 * - no command was delivered to a robot twice (the agent counts every duplicate it is sent; these
 *   robots acknowledge at once, so a duplicate is a resend of a command the robot had decided on).
 *
 * The stream pauses while the gateway is down, so no stop is kept `deferred` across a crash (a
 * deferred command first sent by a reconnect flush and acked just before a crash is a separate,
 * documented edge case: docs/commands.md, "Seq numbers"). About 30-40 s on a loaded 2-core machine,
 * mostly the five gateway starts.
 */
import { rmSync } from 'node:fs';
import http from 'node:http';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until, sleep } from '../support/until.js';
import { freePort } from '../support/net.js';

const CYCLES = 5;
// The stream of stops and the checks after each restart go well past the default per-key rate limit.
const RATE = { FLEETGW_RATE_LIMIT_RPS: '1000000', FLEETGW_RATE_LIMIT_BURST: '1000000' };
/** Stop reason of the probe's stops that the robots take SLOW_MS to apply (see the probe). */
const SLOW = 'ackdur-slow';
const SLOW_MS = 150;
const dirs: string[] = [];
const running: { gw: RunningGateway | null; agents: RobotAgent[] } = { gw: null, agents: [] };

afterEach(async () => {
  for (const a of running.agents.splice(0)) await a.stop();
  await running.gw?.stop('SIGKILL');
  running.gw = null;
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * POST with node:http on a keep-alive agent (lighter than fetch, so the kill below follows the
 * answer's arrival within a fraction of a millisecond); rejects when the connection dies.
 */
function postJson(agent: http.Agent, base: string, key: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, {
      method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

interface Answer {
  commandId: string;
  state: string;
  cycle: number;
}

describe('gateway SIGKILLed under a stream of stops with wait_for_ack', () => {
  it('every command answered agent_received has a record and an audit entry after the restart, and none is resent', async () => {
    const d = makeDataDir('fleetgw-ackdur-');
    dirs.push(d.dataDir);
    const creds = [0, 1].map((i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`]));
    const ports = { http: await freePort(), grpc: await freePort() };
    const start = async (): Promise<RunningGateway> => {
      running.gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--port', String(ports.http), '--grpc-port', String(ports.grpc)], RATE);
      return running.gw;
    };
    let gw = await start();
    const applied = new Map<string, number>();
    const slowApplied = new Set<string>();
    const agents = creds.map((c) => {
      const a = new RobotAgent({
        address: gw.ready.grpc, ...c, dedicatedConnection: true, reconnect: { initialMs: 20, maxMs: 100 },
        onCommand: (cmd) => {
          applied.set(cmd.commandId, (applied.get(cmd.commandId) ?? 0) + 1);
          // The probe's "slow" stops take a while to apply: their acks leave after the gateway died.
          // (Time-based on purpose: the robot's own apply time is part of the scenario.)
          if (cmd.action.case === 'stop' && cmd.action.value.reason === SLOW) {
            return sleep(SLOW_MS).then(() => {
              slowApplied.add(cmd.commandId);
              return { accept: true };
            });
          }
          return { accept: true };
        },
      });
      running.agents.push(a);
      a.start();
      return a;
    });
    const robotsOnline = async (): Promise<boolean> => {
      for (const c of creds) {
        const r = await api(gw.ready.http, d.apiKey, `/v1/robots/${c.robotId}`).catch(() => null);
        if (r?.body?.online !== true) return false;
      }
      return agents.every((a) => a.connected);
    };
    await until(robotsOnline, 15_000, 'robots online');

    const answers: Answer[] = [];
    let cycle = 0;
    let streaming = true;
    let done = false;
    /** The kill of the current cycle, once armed (see the header). */
    let armed: 'after-ack-answer' | 'after-dispatched-answers' | null = null;
    const crash: { exited: Promise<number | null> | null } = { exited: null };
    /** The slow stops answered right before the current cycle's kill. */
    let slowIds: string[] = [];
    const httpAgent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const stop = async (c: number, target: Record<string, unknown>, wait: boolean, reason = 'ackdur'): Promise<Answer[]> => {
      let res: { status: number; body: any };
      try {
        res = await postJson(httpAgent, gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
          org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', reason, ...target, ...(wait ? { wait_for_ack_ms: 5000 } : {}),
        });
      } catch {
        return []; // the gateway was killed under this request: no answer, nothing promised
      }
      if (res.status !== 200) return [];
      const got = (res.body.outcomes as { delivery?: { state: string; commandId: string } }[])
        .flatMap((o) => (o.delivery ? [{ commandId: o.delivery.commandId, state: o.delivery.state, cycle: c }] : []));
      answers.push(...got);
      return got;
    };
    const kill = (): void => {
      armed = null;
      streaming = false;
      crash.exited = gw.stop('SIGKILL');
    };
    let inFlight = 0;
    // Clients 0-3: the stream (0 without a wait, 1 both robots in one request, 2 and 3 one robot
    // with wait_for_ack). Client 4 triggers the kill once it is armed and the stream is quiet: any
    // other write would flush the held writes early and close the window that the kill targets.
    const client = async (i: number): Promise<void> => {
      for (let n = 0; !done; n++) {
        const robot = { robot_id: creds[(i + n) % 2]!.robotId };
        if (i === 4) {
          if (armed === null || inFlight > 0) {
            await sleep(1);
            continue;
          }
          const c = cycle;
          if (armed === 'after-ack-answer') {
            // Killed right after an agent_received answer arrives: before the fix the record of a
            // stop answered on its ack was written up to 5 ms later.
            const got = await stop(c, robot, true);
            if (got.some((a) => a.state === 'agent_received')) kill();
          } else {
            // Killed right after three stops to one robot were answered `dispatched` (stored): the
            // robot applies them one after the other, SLOW_MS each, and its acks go to a dead
            // stream, so after the restart all three are pending and at or below the last applied
            // seq of the robot's Hello. Before the fix only the one equal to it was settled and the
            // other two were sent to the robot again.
            const got = await Promise.all([0, 1, 2].map(() => stop(c, robot, false, SLOW)));
            if (got.every((g) => g.length === 1)) {
              slowIds = got.map((g) => g[0]!.commandId);
              kill();
            }
          }
          continue;
        }
        if (!streaming || armed !== null) {
          await sleep(2);
          continue;
        }
        inFlight++;
        try {
          await stop(cycle, i === 1 ? { robot_ids: creds.map((x) => x.robotId) } : robot, i !== 0);
        } finally {
          inFlight--;
        }
      }
    };
    const clients = [0, 1, 2, 3, 4].map((i) => client(i));

    const dupsAt: number[] = [];
    let settledByHello = 0; // acked commands whose settled state the crash lost: the Hello settled them
    const report: { cycle: number; kill: string; answered: number; received: number; missing: string[]; unaudited: string[]; notReceived: string[]; resentToRobots: number }[] = [];
    try {
      for (cycle = 0; cycle < CYCLES; cycle++) {
        // The stream runs for a random number of answers (not a time: a loaded machine answers fewer per second).
        const before = answers.length;
        const quota = 20 + Math.floor(Math.random() * 80);
        await until(() => answers.length >= before + quota, 30_000, `${quota} answers in cycle ${cycle + 1}`);
        armed = cycle % 2 === 0 ? 'after-ack-answer' : 'after-dispatched-answers';
        await until(() => crash.exited !== null, 10_000, `the answers to crash after (${armed})`);
        expect(await crash.exited).toBeNull();
        crash.exited = null;
        // The robot finishes the slow stops before the gateway is back: its Hello must cover all three.
        if (cycle % 2 === 1) await until(() => slowIds.every((id) => slowApplied.has(id)), 10_000, 'the robot to apply the three slow stops');
        gw = await start();
        await until(robotsOnline, 15_000, `robots back online after crash ${cycle + 1}`);
        // The Hello settled and the reconnect flush went out before a stop sent now on the same
        // ordered stream: once both robots acknowledged it, a wrong resend would have arrived.
        const probe = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
          method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', reason: 'probe', robot_ids: creds.map((c) => c.robotId), wait_for_ack_ms: 10_000 }),
        });
        expect(probe.body.outcomes.map((o: { delivery: { state: string } }) => o.delivery.state)).toEqual(['agent_received', 'agent_received']);

        const mine = answers.filter((a) => a.cycle === cycle);
        const received = mine.filter((a) => a.state === 'agent_received');
        const missing: string[] = [];
        const notReceived: string[] = [];
        for (const a of mine) {
          const r = await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${a.commandId}`);
          if (r.status !== 200) missing.push(`${a.commandId} (answered ${a.state})`);
          else if (a.state === 'agent_received' && r.body.state !== 'agent_received') notReceived.push(`${a.commandId}: ${String(r.body.state)}`);
          else if (r.body.ackSource === 'hello') settledByHello++;
        }
        const audited = new Set<string>();
        let cursor: string | null = null;
        do {
          const q = `/v1/audit-log?fleet_id=${d.fleetId}&limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const page = await api(gw.ready.http, d.apiKey, q);
          expect(page.status).toBe(200);
          for (const e of page.body.items as { commandId: string }[]) audited.add(e.commandId);
          cursor = page.body.next_cursor as string | null;
        } while (cursor);
        const unaudited = received.filter((a) => !audited.has(a.commandId)).map((a) => a.commandId);
        const dups = agents.reduce((n, a) => n + a.stats().duplicateCommands, 0);
        dupsAt.push(dups);
        report.push({ cycle: cycle + 1, kill: cycle % 2 === 0 ? 'after-ack-answer' : 'after-dispatched-answers', answered: mine.length, received: received.length, missing, unaudited, notReceived, resentToRobots: dups - (dupsAt.at(-2) ?? 0) });
        streaming = true;
      }
    } finally {
      done = true;
      streaming = true;
      await Promise.allSettled(clients);
      httpAgent.destroy();
    }
    // All cycles are checked before asserting, so a failure shows how often each defect occurred.
    expect(report.map(({ answered: _a, received: _r, ...r }) => r)).toEqual(report.map((r) => ({ cycle: r.cycle, kill: r.kill, missing: [], unaudited: [], notReceived: [], resentToRobots: 0 })));
    expect(report.reduce((n, r) => n + r.received, 0)).toBeGreaterThan(0);
    // The reconnect path was exercised: commands pending after a restart were settled by a Hello.
    expect(settledByHello).toBeGreaterThan(0);
    // Every command reached its robot exactly once (applied counts first deliveries only).
    expect([...applied.values()].every((n) => n === 1)).toBe(true);
    expect(dupsAt.at(-1)).toBe(0);
  }, 240_000);
});
