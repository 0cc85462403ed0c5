/**
 * Alerts through the real `fleetgw serve` process (dist: `npm run build` first) with `fleetgw sim`
 * robots on the real robot link:
 *
 * - e-stop (the sim's button, SIGUSR1/SIGUSR2) opens an `estop` alert, seen at once on the live
 *   stream, acknowledged with `fleet:write` (403 without), resolved when released; its events are on
 *   the robot's timeline;
 * - battery below the threshold opens `battery_low` (threshold set by FLEETGW_ALERT_BATTERY_LOW_PCT);
 * - a killed sim opens `robot_offline` after FLEETGW_ALERT_OFFLINE_AFTER_S, resolved when it returns;
 * - alerts survive a restart, and one whose condition cleared meanwhile (the battery thresholds
 *   lowered across the restart) is resolved after it (`cleared_while_down`);
 * - a schedule that fails (no robot before its deadline) opens `schedule_failed`, resolved by cancel;
 * - a command sent to a frozen robot (SIGSTOP, still on the link) opens `command_retry_exhausted`
 *   once its retry budget runs out, resolved when the thawed robot acknowledges it late.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { openStream, requestTicket, startSim, type StreamClient } from '../support/stream-client.js';
import { until } from '../support/until.js';

type Json = Record<string, any>;

const dirs: string[] = [];
const running: { gw: RunningGateway[]; procs: ChildProcess[]; streams: StreamClient[] } = { gw: [], procs: [], streams: [] };

afterEach(async () => {
  for (const s of running.streams.splice(0)) s.ws.terminate();
  for (const p of running.procs.splice(0)) {
    if (p.exitCode === null && p.signalCode === null) {
      p.kill('SIGCONT');
      p.kill('SIGKILL');
    }
  }
  for (const g of running.gw.splice(0)) await g.stop('SIGKILL');
});

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function gateway(dataDir: string, env: Record<string, string>): Promise<RunningGateway> {
  const gw = await startGatewayProcess(dataDir, ['--insecure-http'], env);
  running.gw.push(gw);
  return gw;
}

async function sim(dir: string, gw: RunningGateway, robot: { robotId: string; robotToken: string }): Promise<ChildProcess> {
  const p = await startSim(dir, gw.ready.grpc, [robot], 10);
  running.procs.push(p);
  return p;
}

function alertsApi(gw: RunningGateway, key: string, org: string, fleet: string) {
  const base = `/v1/orgs/${org}/fleets/${fleet}/alerts`;
  return {
    list: async (q: Record<string, string> = {}): Promise<Json[]> => {
      const r = await api(gw.ready.http, key, `${base}?${new URLSearchParams(q).toString()}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.items as Json[];
    },
    get: (id: string) => api(gw.ready.http, key, `${base}/${id}`),
    ack: (id: string, body: Json = {}, k = key) => api(gw.ready.http, k, `${base}/${id}/acknowledge`, { method: 'POST', body: JSON.stringify(body) }),
  };
}

describe('alerts through the real process', () => {
  it('e-stop, battery and offline from sim robots; the live stream; acknowledge; a restart', async () => {
    const d = makeDataDir('fleetgw-alerts-');
    dirs.push(d.dataDir);
    const r0 = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r0']);
    const r1 = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']);
    const readKey = adminJson<{ apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'fleet:read,robots:read']).apiKey;
    // Every simulated battery (60-100 %, draining) is below 100.
    const gw = await gateway(d.dataDir, { FLEETGW_ALERT_OFFLINE_AFTER_S: '1', FLEETGW_ALERT_BATTERY_LOW_PCT: '100', FLEETGW_ALERT_BATTERY_CLEAR_PCT: '100' });
    const a = alertsApi(gw, d.apiKey, d.orgId, d.fleetId);

    // A dashboard with a fleet:read ticket watches.
    const ticket = await requestTicket(gw.ready.http, readKey, d.orgId, d.fleetId);
    expect(ticket.status).toBe(201);
    const stream = openStream(ticket.body.url as string);
    running.streams.push(stream);
    await stream.opened;
    stream.send({ op: 'subscribe', ticket: ticket.body.ticket, encoding: 'json' });
    await until(() => stream.of('subscribed').length === 1, 5_000, 'subscribed');

    const simA = await sim(d.dataDir, gw, r0);
    const simB = await sim(d.dataDir, gw, r1);
    for (const r of [r0, r1]) {
      await until(async () => (await a.list({ kind: 'battery_low', robot_id: r.robotId, state: 'open' })).length === 1, 20_000, 'a battery_low alert');
    }
    // Robots not yet connected 1 s after the start got offline alerts; connecting resolved them.
    await until(async () => (await a.list({ kind: 'robot_offline', state: 'open' })).length === 0, 10_000, 'no open offline alert');
    const battery0 = (await a.list({ kind: 'battery_low', robot_id: r0.robotId }))[0]!;
    expect(battery0).toMatchObject({ severity: 'warning', subject: { type: 'robot', id: r0.robotId }, robotId: r0.robotId, occurrences: 1, acknowledgedBy: null });
    expect(battery0.details.thresholdPct).toBe(100);

    // E-stop pressed on r0: an alert, on the stream at once.
    simA.kill('SIGUSR1');
    await until(async () => (await a.list({ kind: 'estop', state: 'open' })).length === 1, 10_000, 'the estop alert');
    const [estop] = await a.list({ kind: 'estop' });
    expect(estop).toMatchObject({ robotId: r0.robotId, severity: 'critical', state: 'open', correlationId: r0.robotId });
    await until(() => stream.of('alert').some((m) => m.change === 'opened' && (m.alert as Json).alertId === estop!.alertId), 5_000, 'the alert on the stream');
    const onStream = stream.of('alert').find((m) => (m.alert as Json).alertId === estop!.alertId)!;
    expect(onStream.alert).toMatchObject({ kind: 'estop', state: 'open', robotId: r0.robotId });
    // Telemetry keeps flowing on the same socket.
    expect(stream.of('sample').length).toBeGreaterThan(0);

    // Acknowledge: fleet:write only; who and when.
    expect((await a.ack(estop!.alertId as string, {}, readKey)).status).toBe(403);
    expect((await a.ack(estop!.alertId as string, { extra: 1 })).status).toBe(400);
    expect((await a.ack(randomUUID())).status).toBe(404);
    const acked = await a.ack(estop!.alertId as string, { note: 'on my way' });
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({ state: 'acknowledged', acknowledgedBy: { actorType: 'api_key', apiKeyId: d.apiKeyId }, acknowledgeNote: 'on my way' });
    expect(typeof acked.body.acknowledgedAtMs).toBe('number');
    await until(() => stream.of('alert').some((m) => m.change === 'acknowledged'), 5_000, 'the acknowledgement on the stream');
    // Pressed still: no second alert.
    expect(await a.list({ kind: 'estop' })).toHaveLength(1);

    // Released: resolved.
    simA.kill('SIGUSR2');
    await until(async () => (await a.get(estop!.alertId as string)).body.state === 'resolved', 10_000, 'the estop alert resolved');
    expect((await a.get(estop!.alertId as string)).body.resolution).toBe('condition_cleared');
    expect((await a.ack(estop!.alertId as string)).status).toBe(409);
    const events = await api(gw.ready.http, readKey, `/v1/events?fleet_id=${d.fleetId}&correlation_id=${r0.robotId}`);
    const kinds = (events.body.items as Json[]).filter((e) => e.subject.id === estop!.alertId).map((e) => e.kind);
    expect(kinds).toEqual(['alert.opened', 'alert.acknowledged', 'alert.resolved']);

    // r1's sim dies: offline after 1 s.
    simB.kill('SIGKILL');
    await until(async () => (await a.list({ kind: 'robot_offline', robot_id: r1.robotId, state: 'open' })).length === 1, 15_000, 'the offline alert');
    const offline = (await a.list({ kind: 'robot_offline', state: 'open' }))[0]!;

    // Restart with battery thresholds that every robot now clears: the battery alerts resolve at
    // start; the offline alert (r1 still down) survives as it was.
    simA.kill('SIGTERM');
    await gw.stop();
    const gw2 = await gateway(d.dataDir, { FLEETGW_ALERT_OFFLINE_AFTER_S: '1', FLEETGW_ALERT_BATTERY_LOW_PCT: '1', FLEETGW_ALERT_BATTERY_CLEAR_PCT: '2' });
    const a2 = alertsApi(gw2, d.apiKey, d.orgId, d.fleetId);
    const batteries = await a2.list({ kind: 'battery_low' });
    expect(batteries.map((b) => `${b.state}/${b.resolution}`)).toEqual(['resolved/cleared_while_down', 'resolved/cleared_while_down']);
    const stillOffline = await a2.list({ kind: 'robot_offline', state: 'open' });
    expect(stillOffline.map((o) => o.alertId)).toContain(offline.alertId);
    // r1 back: resolved.
    await sim(d.dataDir, gw2, r1);
    await until(async () => (await a2.get(offline.alertId as string)).body.state === 'resolved', 15_000, 'the offline alert resolved');
    // Another organization's view: 403 for its org, 404 for an unknown fleet or alert.
    expect((await api(gw2.ready.http, d.apiKey, `/v1/orgs/${randomUUID()}/fleets/${d.fleetId}/alerts`)).status).toBe(403);
    expect((await api(gw2.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${randomUUID()}/alerts`)).status).toBe(404);
  }, 120_000);

  it('a failed schedule opens schedule_failed; cancelling it resolves the alert', async () => {
    const d = makeDataDir('fleetgw-alerts-sched-');
    dirs.push(d.dataDir);
    const r0 = adminJson<{ robotId: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r0']);
    const gw = await gateway(d.dataDir, {});
    const a = alertsApi(gw, d.apiKey, d.orgId, d.fleetId);
    const fleetBase = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
    const post = (path: string, body: Json, idem?: string) =>
      api(gw.ready.http, d.apiKey, path, { method: 'POST', body: JSON.stringify(body), headers: idem !== undefined ? { 'idempotency-key': idem } : {} });
    const square = { type: 'Polygon', coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52.001], [5, 52]]] };
    const feature = await post(`${fleetBase}/features`, { name: 'yard', geometry: square });
    expect(feature.status).toBe(201);
    const template = await post(`${fleetBase}/mission-templates`, { name: 'patrol', featureId: feature.body.featureId, steps: [{ kind: 'wait', config: { seconds: 5 } }] }, randomUUID());
    expect(template.status).toBe(201);
    const started = await post('/v1/agent/control-operation', { org_id: d.orgId, fleet_id: d.fleetId, action: 'start', operation_id: template.body.operationId });
    expect(started.status).toBe(200);
    // The only robot never connects: no robot before the 1 s deadline.
    const deployed = await post('/v1/agent/deploy-mission', { org_id: d.orgId, fleet_id: d.fleetId, mission_id: template.body.missionId, robot_ids: [r0.robotId], deployment_deadline_ms: 1000 }, randomUUID());
    expect(deployed.status).toBe(202);
    const scheduleId = deployed.body.scheduleId as string;
    await until(async () => (await a.list({ kind: 'schedule_failed', state: 'open' })).length === 1, 20_000, 'the schedule_failed alert');
    const [failed] = await a.list({ kind: 'schedule_failed' });
    expect(failed).toMatchObject({ subject: { type: 'schedule', id: scheduleId }, robotId: null, correlationId: deployed.body.correlationId });
    // On the schedule's timeline.
    const timeline = await api(gw.ready.http, d.apiKey, `/v1/events?fleet_id=${d.fleetId}&correlation_id=${scheduleId}`);
    expect((timeline.body.items as Json[]).map((e) => e.kind)).toEqual(expect.arrayContaining(['schedule.failed', 'alert.opened']));
    const cancelled = await post('/v1/agent/cancel-schedule', { org_id: d.orgId, fleet_id: d.fleetId, schedule_id: scheduleId });
    expect(cancelled.status).toBe(200);
    await until(async () => (await a.get(failed!.alertId as string)).body.state === 'resolved', 10_000, 'the schedule alert resolved');
  }, 60_000);

  it('a command whose retry budget runs out opens command_retry_exhausted; the late ack resolves it', async () => {
    const d = makeDataDir('fleetgw-alerts-cmd-');
    dirs.push(d.dataDir);
    const r0 = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r0']);
    // Keepalive long enough that a frozen robot stays on the link for the whole budget (sends at 0, 1, 3, 7, 15 s; spent at 23 s).
    const gw = await gateway(d.dataDir, { FLEETGW_ROBOT_KEEPALIVE_MS: '30000', FLEETGW_ROBOT_KEEPALIVE_TIMEOUT_MS: '30000' });
    const a = alertsApi(gw, d.apiKey, d.orgId, d.fleetId);
    const s = await sim(d.dataDir, gw, r0);
    await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${r0.robotId}`)).body.online === true, 20_000, 'the robot online');
    s.kill('SIGSTOP');
    const sent = await api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${r0.robotId}/go-to`, { method: 'POST', body: JSON.stringify({ latitude: 52.0, longitude: 5.0 }) });
    expect(sent.status).toBe(200);
    const commandId = sent.body.delivery.commandId as string;
    await until(async () => (await a.list({ kind: 'command_retry_exhausted', state: 'open' })).length === 1, 40_000, 'the retry-exhausted alert');
    const [alert] = await a.list({ kind: 'command_retry_exhausted' });
    expect(alert).toMatchObject({ subject: { type: 'command', id: commandId }, robotId: r0.robotId, details: { action: 'go_to', attempts: 5 } });
    // Thawed, the robot reads what was written to it and acknowledges late: the condition cleared.
    s.kill('SIGCONT');
    await until(async () => (await a.get(alert!.alertId as string)).body.state === 'resolved', 15_000, 'the alert resolved by the late ack');
  }, 90_000);
});
