// schedule-command for every non-mission command (issue 11 part 3) through the real `fleetgw serve`
// and a `fleetgw sim` robot: mode, invoke_action, update_settings and force_reset fire with the same
// checks as an immediate control-robot command (the robot's advertised policy at fire time, the
// offline rule), and force_reset keeps its own rule (exactly one robot).
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { startSim } from '../support/stream-client.js';
import { until } from '../support/until.js';

describe('schedule-command over HTTP', () => {
  const d = makeDataDir('fleetgw-schedcmd-');
  let gw: RunningGateway;
  let sim: ChildProcess | undefined;
  let robot: { robotId: string; robotToken: string };
  let offline: string;
  const base = () => ({ org_id: d.orgId, fleet_id: d.fleetId });

  /** Schedules `command` to fire now; returns the answer. */
  const schedule = (command: Record<string, unknown>) =>
    api(gw.ready.http, d.apiKey, '/v1/agent/schedule-command', {
      method: 'POST',
      headers: { 'idempotency-key': randomUUID() },
      body: JSON.stringify({ ...base(), command }),
    });

  /** The schedule's row once its fire settled (deployed or failed). */
  async function settled(scheduleId: string): Promise<any> {
    let row: any;
    await until(async () => {
      row = (await api(gw.ready.http, d.apiKey, `/v1/mission-schedule?fleet_id=${d.fleetId}&id=${scheduleId}`)).body;
      return row.status === 'deployed' || row.status === 'failed';
    }, 15_000, `schedule ${scheduleId} to settle`);
    return row;
  }

  /** The newest audit entry of the robot for `action`. */
  async function lastCommand(robotId: string, action: string): Promise<any> {
    const res = await api(gw.ready.http, d.apiKey, `/v1/audit-log?fleet_id=${d.fleetId}&robot_id=${robotId}`);
    return res.body.items.find((e: any) => e.action === action);
  }

  beforeAll(async () => {
    robot = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'sim']);
    offline = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'parked']).robotId!;
    gw = await startGatewayProcess(d.dataDir);
    sim = await startSim(d.dataDir, gw.ready.grpc, [robot], 10);
    await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robot.robotId}`)).body.online === true, 20_000, 'robot online');
    // Its advertised policy is compiled (under a gateway-wide budget: later on a loaded machine), so
    // a fire's policy check sees the policy rather than "waiting to be compiled".
    await until(async () => (await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
      method: 'POST', body: JSON.stringify({ ...base(), action: 'mode', robot_id: robot.robotId, mode: 'autonomous' }),
    })).status === 200, 30_000, 'policy compiled', 250);
  }, 90_000);

  afterAll(async () => {
    if (sim && sim.exitCode === null) {
      sim.kill('SIGTERM');
      await new Promise((r) => sim!.once('exit', r));
    }
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('invoke_action fires through the robot\'s policy: valid arguments are delivered, invalid ones refused at fire time', async () => {
    const ok = await schedule({ action: 'invoke_action', robot_ids: [robot.robotId], action_name: 'beep', arguments: { durationMs: 200 } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect((await settled(ok.body.scheduleId)).status).toBe('deployed');
    await until(async () => (await lastCommand(robot.robotId, 'invoke_action'))?.state === 'agent_received', 10_000, 'the scheduled beep acknowledged');

    const bad = await schedule({ action: 'invoke_action', robot_ids: [robot.robotId], action_name: 'beep', arguments: { durationMs: 999_999 } });
    expect(bad.status).toBe(201);
    const row = await settled(bad.body.scheduleId);
    expect(row).toMatchObject({ status: 'failed', last_failure_reason: 'command_failed' });
    expect(row.last_failure_detail).toMatch(/durationMs|policy|argument/i);
    expect(row.command).toEqual({ action: 'invoke_action', action_name: 'beep', arguments: { durationMs: 999_999 } });

    const unknown = await schedule({ action: 'invoke_action', robot_ids: [robot.robotId], action_name: 'fly' });
    expect((await settled(unknown.body.scheduleId)).status).toBe('failed');
  });

  it('update_settings and mode are checked against the advertised policy at fire time', async () => {
    const ok = await schedule({ action: 'update_settings', robot_ids: [robot.robotId], settings: { max_speed_mps: 1.2 } });
    const okRow = await settled(ok.body.scheduleId);
    expect(okRow.status, okRow.last_failure_detail).toBe('deployed');
    const out = await schedule({ action: 'update_settings', robot_ids: [robot.robotId], settings: { max_speed_mps: 99 } });
    expect((await settled(out.body.scheduleId)).last_failure_detail).toMatch(/max_speed_mps/);
    const mode = await schedule({ action: 'mode', robot_ids: [robot.robotId], mode: 'manual' });
    const modeRow = await settled(mode.body.scheduleId);
    expect(modeRow.status, modeRow.last_failure_detail).toBe('deployed');
    const badMode = await schedule({ action: 'mode', robot_ids: [robot.robotId], mode: 'flying' });
    expect((await settled(badMode.body.scheduleId)).status).toBe('failed');
  });

  it('an offline robot fails every action but stop, as an immediate command would', async () => {
    const res = await schedule({ action: 'invoke_action', robot_ids: [offline], action_name: 'beep', arguments: { durationMs: 100 } });
    const row = await settled(res.body.scheduleId);
    expect(row.status).toBe('failed');
    expect(row.last_failure_detail).toMatch(/offline/);
    const stop = await schedule({ action: 'stop', robot_ids: [offline] });
    expect((await settled(stop.body.scheduleId)).status).toBe('deployed');
  });

  it('force_reset takes exactly one robot', async () => {
    const two = await schedule({ action: 'force_reset', robot_ids: [robot.robotId, offline] });
    expect(two.status).toBe(400);
    expect(two.body.code).toBe('bad_request');
    const one = await schedule({ action: 'force_reset', robot_ids: [robot.robotId] });
    expect(one.status).toBe(201);
    expect((await settled(one.body.scheduleId)).status).toBe('deployed');
  });

  it('refuses fields of another action and missing required fields, naming them', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ action: 'invoke_action', robot_ids: [robot.robotId] }, /command\.action_name/],
      [{ action: 'update_settings', robot_ids: [robot.robotId] }, /command\.settings/],
      [{ action: 'mode', robot_ids: [robot.robotId], mode: 'manual', settings: { a: 1 } }, /command\.settings/],
      [{ action: 'stop', robot_ids: [robot.robotId], action_name: 'beep' }, /command\.action_name/],
      [{ action: 'start', robot_ids: [robot.robotId], arguments: {} }, /command\.arguments/],
      [{ action: 'teleport', robot_ids: [robot.robotId] }, /command\.action must be one of/],
    ];
    for (const [command, message] of cases) {
      const res = await schedule(command);
      expect(res.status, JSON.stringify(command)).toBe(400);
      expect(res.body.error).toMatch(message);
    }
  });
});
