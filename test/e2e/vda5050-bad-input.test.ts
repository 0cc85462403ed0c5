/**
 * VDA 5050 bad input through `fleetgw serve`: a robot logged in to the embedded broker with its own
 * token publishes malformed, oversized, wrong-version, wrong-schema, wrong-identity and out-of-order
 * messages, then floods. Each is counted in /metrics under its reason and logged once for the robot;
 * none shows in GET /v1/robots or in the robot's stored telemetry; the gateway keeps running; and a
 * second robot (vda-5050-lib's virtual AGV) has its stop delivered and FINISHED meanwhile.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { ActionStatus, AgvController, VirtualAgvAdapter } from 'vda-5050-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

const REASONS = ['too_large', 'unknown_topic', 'not_json', 'wrong_version', 'wrong_identity', 'schema', 'out_of_order', 'gate_error'];

describe('VDA 5050 bad input through fleetgw serve', () => {
  const d = makeDataDir('fleetgw-vda-bad-');
  let gw: RunningGateway;
  let bad: MqttClient;
  let agv: AgvController;
  let metricsToken = '';
  let badId = '';
  let goodId = '';
  const t0 = Date.now();
  let firstRefusalAt = 0;

  const scrape = async (): Promise<string> => (await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
  const series = (text: string, name: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
  };
  const totalRefused = (text: string): number => REASONS.reduce((sum, r) => sum + series(text, `fleetgw_vda5050_messages_rejected_total{reason="${r}"}`), 0);
  const rejected = async (reason: string): Promise<number> => series(await scrape(), `fleetgw_vda5050_messages_rejected_total{reason="${reason}"}`);
  const robotView = async (id: string): Promise<any> => ((await api(gw.ready.http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`)).body as any[]).find((r) => r.id === id);
  /** The bad robot's stored battery values, once one of `marker` is among them. */
  const storedBatteries = async (marker: number): Promise<number[]> => {
    let items: { batteryPct: number }[] = [];
    await until(async () => {
      const r = await api(gw.ready.http, d.apiKey, `/v1/robots/${badId}/telemetry?from_ms=${t0 - 60_000}&to_ms=${Date.now() + 60_000}&limit=1000`);
      items = (r.body.items ?? []) as { batteryPct: number }[];
      return items.some((x) => x.batteryPct === marker);
    }, 60_000, `the bad robot's sample with battery ${marker} stored`);
    return items.map((x) => x.batteryPct);
  };
  const topic = (name: string): string => `uagv/v2/Acme/BAD-1/${name}`;
  const header = (headerId: number) => ({ headerId, timestamp: new Date().toISOString(), version: '2.0.0', manufacturer: 'Acme', serialNumber: 'BAD-1' });
  const state = (headerId: number, batteryCharge: number, extra: Record<string, unknown> = {}): string => JSON.stringify({
    ...header(headerId), orderId: '', orderUpdateId: 0, lastNodeId: '', lastNodeSequenceId: 0, driving: false, operatingMode: 'AUTOMATIC',
    nodeStates: [], edgeStates: [], actionStates: [], errors: [], batteryState: { batteryCharge, charging: false },
    safetyState: { eStop: 'NONE', fieldViolation: false }, agvPosition: { x: 1, y: 1, theta: 0, mapId: 'site', positionInitialized: true }, ...extra,
  });

  beforeAll(async () => {
    const b = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'bad', '--vda5050', 'Acme/BAD-1', '--json']);
    const g = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'good', '--vda5050', 'Acme/AGV-2', '--json']);
    badId = b.robotId;
    goodId = g.robotId;
    const port = await freePort();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--vda5050', 'on', '--vda5050-mqtt-port', String(port)]);
    metricsToken = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    const url = `mqtt://127.0.0.1:${port}`;
    bad = await mqtt.connectAsync(url, { clientId: 'bad-robot', username: badId, password: b.robotToken, reconnectPeriod: 200 });
    agv = new AgvController(
      { manufacturer: 'Acme', serialNumber: 'AGV-2' },
      { interfaceName: 'uagv', vdaVersion: '2.0.0', transport: { brokerUrl: url, username: goodId, password: g.robotToken, reconnectPeriod: 200 } },
      { agvAdapterType: VirtualAgvAdapter, publishVisualizationInterval: 250 },
      { initialPosition: { mapId: 'site', x: 5, y: 5, theta: 0, lastNodeId: 'home' } },
    );
    await agv.start();
  }, 120_000);

  afterAll(async () => {
    await agv?.stop().catch(() => undefined);
    await bad?.endAsync().catch(() => undefined);
    await gw?.stop();
  });

  it('publishes every reason from 0', async () => {
    const text = await scrape();
    for (const r of REASONS) expect(series(text, `fleetgw_vda5050_messages_rejected_total{reason="${r}"}`), r).toBe(0);
  });

  it('counts each kind of bad message under its reason; none brings the robot online', async () => {
    const kinds: [string, string, string | Buffer][] = [
      ['not_json', 'connection', '{"connectionState": "ONLINE", '],
      ['not_json', 'state', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
      ['too_large', 'state', state(1, 9, { pad: 'x'.repeat(300 * 1024) })],
      ['wrong_version', 'state', state(2, 9, { version: '1.1.0' })],
      ['schema', 'state', state(3, 9, { batteryState: { batteryCharge: 9 } })],
      ['schema', 'state', state(4, 9, { operatingMode: 'AUTOPILOT' })],
      ['wrong_identity', 'state', state(5, 9, { serialNumber: 'AGV-2' })],
      ['schema', 'visualization', JSON.stringify({ ...header(1), agvPosition: { x: 'one' } })],
    ];
    firstRefusalAt = Date.now();
    for (const [reason, t, payload] of kinds) {
      const before = await rejected(reason);
      await bad.publishAsync(topic(t), payload);
      await until(async () => (await rejected(reason)) === before + 1, 15_000, `${reason} on ${t} counted`);
    }
    const view = await robotView(badId);
    expect(view.online).toBe(false);
    expect(view.batteryPct).toBeNull();
  });

  it('refuses an out-of-order state after a valid one: the valid one shows, the older one never does', async () => {
    await bad.publishAsync(topic('connection'), JSON.stringify({ ...header(1), connectionState: 'ONLINE' }));
    await bad.publishAsync(topic('state'), state(100, 42));
    await until(async () => (await robotView(badId))?.batteryPct === 42, 15_000, 'the bad robot online with its valid state');
    const before = await rejected('out_of_order');
    await bad.publishAsync(topic('state'), state(50, 7));
    await until(async () => (await rejected('out_of_order')) === before + 1, 15_000, 'out_of_order counted');
    // A newer valid state after it: once that one is stored, the refused one would have been too.
    await bad.publishAsync(topic('state'), state(101, 43));
    const stored = await storedBatteries(43);
    expect(stored).not.toContain(7);
    expect(stored).toContain(42);
  });

  it('a flood from the bad robot does not keep the good robot\'s stop from completing; the gateway keeps running', async () => {
    await until(async () => (await robotView(goodId))?.online === true, 30_000, 'the virtual AGV online');
    const refusedBefore = totalRefused(await scrape());
    const flood = (async () => {
      for (let i = 0; i < 3000; i++) {
        const payload = i % 5 === 0 ? Buffer.alloc(300 * 1024, 0x20) : i % 5 === 1 ? state(60 + (i % 30), 8) : i % 5 === 2 ? '[[[[' : i % 5 === 3 ? state(1000 + i, 8, { version: '3.0.0' }) : state(1000 + i, 8, { safetyState: {} });
        bad.publish(topic('state'), payload);
      }
      // The flood's last message is valid: once it shows, everything before it was read or replaced.
      await bad.publishAsync(topic('state'), state(1_000_000, 60));
    })();
    const stop = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: goodId, action: 'stop', reason: 'e2e', wait_for_ack_ms: 15_000 }) });
    expect(stop.status).toBe(200);
    const delivery = stop.body.outcomes[0].delivery;
    expect(delivery.state).toBe('agent_received');
    await until(() => agv.currentState.actionStates?.find((a) => a.actionId === delivery.commandId)?.actionStatus === ActionStatus.Finished, 15_000, 'startPause FINISHED on the good robot');
    await flood;
    await until(async () => (await robotView(badId))?.batteryPct === 60, 30_000, 'the bad robot\'s last valid state');
    expect(gw.proc.exitCode).toBeNull();
    expect((await fetch(`${gw.ready.http}/healthz`)).status).toBe(200);

    const text = await scrape();
    // Master control reads a robot's newest state once per turn: the flood's messages were refused by
    // the gate or replaced unread by newer ones, how many of each depends on timing.
    expect(totalRefused(text)).toBeGreaterThan(refusedBefore);
    expect(series(text, 'fleetgw_vda5050_messages_rejected_total{reason="gate_error"}')).toBe(0);
    // Logged at most once a minute for the bad robot (thousands refused), never quoting the robot's values.
    const lines = gw.stderr().split('\n').filter((l) => l.includes('VDA 5050 message refused'));
    const windows = 1 + Math.floor((Date.now() - firstRefusalAt) / 60_000);
    expect(lines.filter((l) => l.includes(badId)).length).toBeGreaterThanOrEqual(1);
    expect(lines.filter((l) => l.includes(badId)).length).toBeLessThanOrEqual(windows);
    expect(lines.filter((l) => l.includes(goodId))).toHaveLength(0);
    expect(gw.stderr()).not.toContain('AUTOPILOT');
  });

  it('stored only the valid states of the bad robot', async () => {
    const batteries = new Set(await storedBatteries(60));
    expect([...batteries].sort((a, b) => a - b)).toEqual([42, 43, 60]);
  });
});
