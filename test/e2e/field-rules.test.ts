/**
 * Field rules end to end: the real `fleetgw serve` (dist: `npm run build` first) and a robot of
 * `fleetgw sim` on the real robot link, watched through the live telemetry stream. The robot holds,
 * three rules are laid across the straight line to a go-to target (a speed limit, a keep-out zone,
 * a stop-and-wait zone), each answered 201 with the robot's acknowledgement; then the robot drives
 * to the target. Its telemetry shows it never faster than the limit inside the speed-limit zone,
 * never inside the keep-out zone (it drives around it and still arrives), and stopped inside the
 * stop-and-wait zone for the zone's wait. After a gateway restart the rules are still there and the
 * reconnected robot holds the same set again.
 */
import { rmSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { toLatLon } from '../../src/sim/geo.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { openStream, requestTicket, startSim, type StreamClient } from '../support/stream-client.js';
import { until } from '../support/until.js';

interface Sample { ts_ms: number; pose: { x_m: number; y_m: number }; velocity: { linear_mps: number } }

const cleanup: { gw: RunningGateway[]; sim: ChildProcess[]; streams: StreamClient[]; dirs: string[] } = { gw: [], sim: [], streams: [], dirs: [] };

afterAll(async () => {
  for (const c of cleanup.streams) c.ws.terminate();
  for (const s of cleanup.sim) if (s.exitCode === null) s.kill('SIGKILL');
  for (const g of cleanup.gw) await g.stop('SIGKILL');
  for (const d of cleanup.dirs) rmSync(d, { recursive: true, force: true });
});

describe('field rules through fleetgw serve and fleetgw sim', () => {
  it('the simulated robot slows, keeps out and waits as the rules say, and the rules survive a restart', async () => {
    const d = makeDataDir('fleetgw-field-rules-');
    cleanup.dirs.push(d.dataDir);
    const robot = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r0']);
    const ports = ['--insecure-http', '--port', String(await freePort()), '--grpc-port', String(await freePort())];
    let gw = await startGatewayProcess(d.dataDir, ports);
    cleanup.gw.push(gw);
    const sim = await startSim(d.dataDir, gw.ready.grpc, [robot], 20);
    cleanup.sim.push(sim);
    const call = (method: string, path: string, body?: unknown) =>
      api(gw.ready.http, d.apiKey, path, { method, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const fleetPath = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;

    const ticket = await requestTicket(gw.ready.http, d.apiKey, d.orgId, d.fleetId);
    expect(ticket.status).toBe(201);
    const stream = openStream(ticket.body.url as string);
    cleanup.streams.push(stream);
    await stream.opened;
    stream.send({ op: 'subscribe', ticket: ticket.body.ticket as string });
    const samples = (): Sample[] => stream.of('sample') as unknown as Sample[];
    await until(() => samples().length > 5, 20_000, 'live samples from the simulated robot');

    // Hold in place (manual mode), then lay the zones along the line from where it stands.
    expect((await call('POST', `${fleetPath}/robots/${robot.robotId}/mode`, { mode: 'manual', wait_for_ack: true })).status).toBe(200);
    await until(() => samples().slice(-5).every((s) => s.velocity.linear_mps === 0), 10_000, 'robot holding');
    const start = samples().at(-1)!.pose;
    const r = Math.hypot(start.x_m, start.y_m);
    const u = r < 1 ? { x: 0, y: 1 } : { x: -start.x_m / r, y: -start.y_m / r }; // towards the depot centre
    const n = { x: -u.y, y: u.x };
    const at = (s: number, w: number) => ({ x: start.x_m + u.x * s + n.x * w, y: start.y_m + u.y * s + n.y * w });
    const along = (p: { x_m: number; y_m: number }) => {
      const dx = p.x_m - start.x_m;
      const dy = p.y_m - start.y_m;
      return { s: dx * u.x + dy * u.y, w: dx * n.x + dy * n.y };
    };
    const zone = (s0: number, s1: number, half: number) => {
      const ring = [at(s0, -half), at(s1, -half), at(s1, half), at(s0, half), at(s0, -half)].map((p) => {
        const ll = toLatLon(p.x, p.y);
        return [ll.longitude, ll.latitude];
      });
      return { type: 'Polygon', coordinates: [ring] };
    };
    const inBox = (p: Sample, s0: number, s1: number, half: number) => {
      const a = along(p.pose);
      return a.s > s0 && a.s < s1 && Math.abs(a.w) < half;
    };
    const SPEED = { s0: 8, s1: 14, half: 6, max: 0.5 };
    const KEEP_OUT = { s0: 20, s1: 26, half: 4 };
    const WAIT = { s0: 33, s1: 36, half: 6, waitS: 3 };
    const TARGET_S = 45;

    const rules = [
      { name: 'slow lane', type: 'speed_limit', geometry: zone(SPEED.s0, SPEED.s1, SPEED.half), parameters: { max_speed_mps: SPEED.max } },
      { name: 'pit', type: 'keep_out', geometry: zone(KEEP_OUT.s0, KEEP_OUT.s1, KEEP_OUT.half), parameters: {} },
      { name: 'crossing', type: 'stop_and_wait', geometry: zone(WAIT.s0, WAIT.s1, WAIT.half), parameters: { wait_s: WAIT.waitS } },
    ];
    const ids: string[] = [];
    let version = 0;
    for (const rule of rules) {
      const res = await call('POST', '/v1/agent/upsert-field-rule', { org_id: d.orgId, fleet_id: d.fleetId, field_rule: rule });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.delivery.robots).toEqual([{ robotId: robot.robotId, outcome: 'applied', error: null }]);
      ids.push(res.body.fieldRule.directiveId as string);
      version = res.body.delivery.ruleSetVersion as number;
    }

    const driveFrom = samples().length;
    const target = toLatLon(at(TARGET_S, 0).x, at(TARGET_S, 0).y);
    expect((await call('POST', `${fleetPath}/robots/${robot.robotId}/go-to`, { ...target, wait_for_ack: true })).status).toBe(200);
    await until(() => {
      const last = samples().at(-1);
      return last !== undefined && Math.hypot(along(last.pose).s - TARGET_S, along(last.pose).w) < 3 && last.velocity.linear_mps === 0;
    }, 300_000, 'robot at the go-to target');
    const drive = samples().slice(driveFrom);

    // Speed limit: samples inside the zone exist and none is faster than the cap; outside it drove faster.
    const slow = drive.filter((p) => inBox(p, SPEED.s0, SPEED.s1, SPEED.half));
    expect(slow.length).toBeGreaterThan(20);
    expect(Math.max(...slow.map((p) => p.velocity.linear_mps))).toBeLessThanOrEqual(SPEED.max + 1e-9);
    expect(Math.max(...drive.map((p) => p.velocity.linear_mps))).toBeGreaterThan(SPEED.max + 0.3);
    // Keep-out: no sample inside, although the straight line crosses it, and the robot went past it.
    expect(drive.filter((p) => inBox(p, KEEP_OUT.s0, KEEP_OUT.s1, KEEP_OUT.half))).toEqual([]);
    expect(drive.some((p) => along(p.pose).s > KEEP_OUT.s1 + 1)).toBe(true);
    // Stop-and-wait: stopped inside the zone for about wait_s, then moved on.
    const stopped = drive.filter((p) => inBox(p, WAIT.s0, WAIT.s1, WAIT.half) && p.velocity.linear_mps === 0);
    expect(stopped.length).toBeGreaterThan(0);
    const heldMs = stopped.at(-1)!.ts_ms - stopped[0]!.ts_ms;
    expect(heldMs).toBeGreaterThanOrEqual(WAIT.waitS * 1000 - 200);
    expect(heldMs).toBeLessThan(WAIT.waitS * 1000 + 1500);

    // A restart: the rules are still there, and the robot (reconnected) holds the current version.
    expect(await gw.stop('SIGTERM')).toBe(0);
    cleanup.gw.splice(cleanup.gw.indexOf(gw), 1);
    gw = await startGatewayProcess(d.dataDir, ports);
    cleanup.gw.push(gw);
    const list = await call('GET', `${fleetPath}/field-rules`);
    expect(list.status).toBe(200);
    expect((list.body.items as { directiveId: string }[]).map((i) => i.directiveId).sort()).toEqual([...ids].sort());
    await until(async () => (await call('GET', `/v1/robots/${robot.robotId}`)).body.online === true, 20_000, 'robot reconnected');
    // Disabling the keep-out zone reaches the reconnected robot, which acknowledges the next version.
    const off = await call('POST', '/v1/agent/control-feature', { org_id: d.orgId, fleet_id: d.fleetId, action: 'disable_field_rule', directive_id: ids[1] });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect(off.body.delivery).toEqual({ ruleSetVersion: version + 1, robots: [{ robotId: robot.robotId, outcome: 'applied', error: null }] });
    // Generous: on a loaded machine the simulator's clock (its samples' time) runs slower than the wall clock.
  }, 600_000);
});
