/**
 * Faults, robot details and utilization through the real `fleetgw serve` process (dist: `npm run
 * build` first) and the real robot link (docs/faults.md, docs/utilization.md):
 *
 * - a robot agent reports its health (faults and devices) on the control stream: faults are raised,
 *   deduplicated, listed per fleet and per robot with the `active` / `robot_id` filters, read one by
 *   one, cleared when no longer reported, and appear on the robot's event timeline;
 * - they survive a gateway restart; a fault still active then clears on the robot's next report;
 * - `fleetgw sim` robots report every device kind; `GET /v1/robots/{id}/details` shows them with
 *   usage totals, and utilization shows their online time and distance (embedded chdb store);
 * - strict input (400 naming the parameter), other organizations' records are 404.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/agent.js';
import type { DeviceHealthInput } from '../../src/agent/health-reporter.js';
import { DeviceKind, HealthSeverity } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { HealthLevel } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { adminJson, FLEETGW_BIN } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

const overtemp = { code: 'drive_left_overtemp', severity: HealthSeverity.ERROR, component: 'drive_left', message: 'winding 92 C', raisedAtMs: 1234n };
const batteryLow = { code: 'battery_low', severity: HealthSeverity.WARNING, component: 'battery', message: 'charge 18 %' };
const devices: DeviceHealthInput[] = [
  { deviceId: 'battery', kind: DeviceKind.BATTERY, level: HealthLevel.WARN, status: 'low', metrics: { charge_pct: 18 } },
  { deviceId: 'drive_left', kind: DeviceKind.DRIVE, level: HealthLevel.ERROR, status: 'overtemp', metrics: { temperature_c: 92 } },
];

describe('faults, robot details and utilization through fleetgw serve', () => {
  const d = makeDataDir();
  const robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'scripted']);
  const simRobot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'sim']);
  const other = adminJson(['init', '--data-dir', d.dataDir, '--another-org', '--org', 'Other', '--fleet', 'Elsewhere']);
  let gw: RunningGateway | undefined;
  let agent: RobotAgent | undefined;
  let sim: ChildProcess | undefined;
  const base = (): string => gw!.ready.http;
  const faultsPath = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/faults`;
  const startAgent = (): RobotAgent => {
    const a = new RobotAgent({ address: gw!.ready.grpc, robotId: robot.robotId!, robotToken: robot.robotToken!, onCommand: () => ({ accept: true }), healthReportPeriodMs: 300, dedicatedConnection: true });
    a.start();
    return a;
  };
  const active = async (): Promise<any[]> => (await api(base(), d.apiKey, `${faultsPath}?active=true`)).body.items;

  afterAll(async () => {
    sim?.kill('SIGTERM');
    await agent?.stop();
    await gw?.stop();
  });

  it('raises, deduplicates, lists, reads and clears faults from the robot\'s health reports', async () => {
    gw = await startGatewayProcess(d.dataDir);
    agent = startAgent();
    agent.setHealth({ faults: [overtemp, batteryLow], devices });
    await until(async () => (await active()).length === 2, 15_000, 'two active faults');
    // Repeats (a report every 300 ms) never add records: wait for a report that came at least three
    // periods after the one the faults are active by.
    const reportedAt = async (): Promise<number> => (await api(base(), d.apiKey, `/v1/robots/${robot.robotId}/details`)).body.health.reportedAtMs ?? 0;
    const first = await reportedAt();
    await until(async () => (await reportedAt()) >= first + 900, 15_000, 'three more health reports');
    const all = await api(base(), d.apiKey, faultsPath);
    expect(all.status).toBe(200);
    expect(all.body.items).toHaveLength(2);
    const hot = all.body.items.find((f: any) => f.code === 'drive_left_overtemp');
    expect(hot).toMatchObject({ robotId: robot.robotId, fleetId: d.fleetId, severity: 'error', component: 'drive_left', message: 'winding 92 C', state: 'active', robotRaisedAtMs: 1234, clearedAtMs: null, clearedBy: null });

    const one = await api(base(), d.apiKey, `${faultsPath}/${hot.faultId}`);
    expect(one.body).toEqual(hot);
    const mine = await api(base(), d.apiKey, `/v1/robots/${robot.robotId}/faults?active=true&limit=1`);
    expect(mine.body.items).toHaveLength(1);
    expect(mine.body.next_cursor).not.toBeNull();
    const next = await api(base(), d.apiKey, `/v1/robots/${robot.robotId}/faults?active=true&limit=1&cursor=${encodeURIComponent(mine.body.next_cursor)}`);
    expect(next.body.items).toHaveLength(1);
    expect(next.body.next_cursor).toBeNull();
    const reused = await api(base(), d.apiKey, `/v1/robots/${robot.robotId}/faults?active=false&cursor=${encodeURIComponent(mine.body.next_cursor)}`);
    expect(reused.status).toBe(400);
    const bySim = await api(base(), d.apiKey, `${faultsPath}?robot_id=${simRobot.robotId}`);
    expect(bySim.body.items).toEqual([]);

    const details = await api(base(), d.apiKey, `/v1/robots/${robot.robotId}/details`);
    expect(details.status).toBe(200);
    expect(details.body.health.devices).toEqual([
      { deviceId: 'battery', kind: 'battery', level: 'warn', status: 'low', metrics: [{ name: 'charge_pct', value: 18 }] },
      { deviceId: 'drive_left', kind: 'drive', level: 'error', status: 'overtemp', metrics: [{ name: 'temperature_c', value: 92 }] },
    ]);
    expect(details.body.health.activeFaults.map((f: any) => f.code).sort()).toEqual(['battery_low', 'drive_left_overtemp']);
    expect(details.body.online).toBe(true);

    agent.setHealth({ faults: [batteryLow], devices });
    await until(async () => (await active()).length === 1, 10_000, 'overtemp cleared');
    const cleared = (await api(base(), d.apiKey, `${faultsPath}/${hot.faultId}`)).body;
    expect(cleared).toMatchObject({ state: 'cleared', clearedBy: 'robot_report' });
    expect(cleared.clearedAtMs).toBeGreaterThanOrEqual(cleared.raisedAtMs);

    const timeline = await api(base(), d.apiKey, `/v1/events?fleet_id=${d.fleetId}&correlation_id=${robot.robotId}`);
    const kinds = timeline.body.items.map((e: any) => `${e.kind} ${e.data.code}`);
    expect(kinds).toEqual(expect.arrayContaining(['fault.raised drive_left_overtemp', 'fault.raised battery_low', 'fault.cleared drive_left_overtemp']));
    expect(kinds.filter((k: string) => k === 'fault.raised drive_left_overtemp')).toHaveLength(1);
  });

  it('answers bad input with 400 naming the parameter and other organizations with 404', async () => {
    const bad = await api(base(), d.apiKey, `${faultsPath}?active=maybe`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('active');
    const badRobot = await api(base(), d.apiKey, `${faultsPath}?robot_id=nope`);
    expect(badRobot.status).toBe(400);
    expect(badRobot.body.error).toContain('robot_id');
    const unknown = await api(base(), d.apiKey, `${faultsPath}?colour=red`);
    expect(unknown.status).toBe(400);
    const hot = (await api(base(), d.apiKey, faultsPath)).body.items[0];
    const foreign = await api(base(), other.apiKey!, `/v1/orgs/${other.orgId}/fleets/${other.fleetId}/faults/${hot.faultId}`);
    expect(foreign.status).toBe(404);
    expect((await api(base(), other.apiKey!, `/v1/robots/${robot.robotId}/details`)).status).toBe(404);
    expect((await api(base(), other.apiKey!, `/v1/robots/${robot.robotId}/faults`)).status).toBe(404);
    const window = await api(base(), d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/utilization?from_ms=${Date.now()}&to_ms=${Date.now() - 1000}`);
    expect(window.status).toBe(400);
    expect(window.body.error).toContain('from_ms');
    const tooLong = await api(base(), d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/utilization?from_ms=${Date.now() - 25 * 3600_000}&to_ms=${Date.now()}`);
    expect(tooLong.status).toBe(400);
    expect((await api(base(), d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/utilization?from_ms=1`)).status).toBe(400);
  });

  it('keeps faults across a restart; a fault still active clears on the robot\'s next report', async () => {
    await agent!.stop();
    agent = undefined;
    expect(await gw!.stop()).toBe(0);
    gw = await startGatewayProcess(d.dataDir);
    const after = (await api(base(), d.apiKey, faultsPath)).body.items;
    expect(after.map((f: any) => `${f.code} ${f.state}`).sort()).toEqual(['battery_low active', 'drive_left_overtemp cleared']);
    agent = startAgent();
    agent.setHealth({ faults: [], devices });
    await until(async () => (await active()).length === 0, 15_000, 'battery_low cleared after the restart');
  });

  it('shows a simulated robot\'s devices, usage totals and utilization', async () => {
    const startedAt = Date.now();
    sim = spawn(process.execPath, [FLEETGW_BIN, 'sim', '--grpc', gw!.ready.grpc, '--robot-id', simRobot.robotId!, '--hz', '10'], {
      stdio: 'ignore',
      env: { ...process.env, FLEETGW_ROBOT_TOKEN: simRobot.robotToken! },
    });
    const detailsPath = `/v1/robots/${simRobot.robotId}/details`;
    await until(async () => {
      const b = (await api(base(), d.apiKey, detailsPath)).body;
      return b.health.devices.length > 0 && b.usage.distanceM > 0 && b.usage.operatingS >= 2;
    }, 30_000, 'sim robot details with devices and usage');
    const b = (await api(base(), d.apiKey, detailsPath)).body;
    expect(new Set(b.health.devices.map((x: any) => x.kind))).toEqual(new Set(['battery', 'drive', 'sensor', 'computer']));
    expect(b.usage.firstSeenAtMs).toBeGreaterThanOrEqual(startedAt - 1000);
    expect(b.usage.lastSeenAtMs).toBeGreaterThanOrEqual(b.usage.firstSeenAtMs);
    expect(b.usage).toMatchObject({ missionsCompleted: 0, missionsFailed: 0 });

    // Telemetry reaches the store in batches: wait until the window shows the robot online.
    const path = (): string => `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/utilization?from_ms=${startedAt - 10_000}&to_ms=${Date.now()}`;
    await until(async () => {
      const u = (await api(base(), d.apiKey, path())).body;
      return (u.robots?.find((r: any) => r.robotId === simRobot.robotId)?.onlineMs ?? 0) >= 5000;
    }, 30_000, 'sim robot online in utilization');
    const u = await api(base(), d.apiKey, path());
    expect(u.status).toBe(200);
    const r = u.body.robots.find((x: any) => x.robotId === simRobot.robotId);
    expect(r.distanceM).toBeGreaterThan(0);
    expect(r.onlineMs + r.offlineMs).toBe(u.body.toMs - u.body.fromMs);
    expect(r.runningMissionMs + r.idleMs + r.chargingMs + r.pausedMs).toBe(r.onlineMs);
    expect(u.body.fleet.robots).toBe(2);
    const narrowed = await api(base(), d.apiKey, `${path()}&robot_id=${simRobot.robotId}`);
    expect(narrowed.body.robots).toHaveLength(1);
    const foreignRobot = await api(base(), d.apiKey, `${path()}&robot_id=${other.fleetId}`);
    expect(foreignRobot.status).toBe(404);
  });
});
