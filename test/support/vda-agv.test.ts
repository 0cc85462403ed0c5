/**
 * The test helpers for third-party VDA 5050 AGVs on their own: a vda-5050-lib AGV logs in to a private
 * mosquitto with a password and a per-user ACL, reports its state, counts the instant actions it
 * receives by action id and executes them; another user cannot write to its topics.
 */
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_MOSQUITTO, startMosquitto, type RunningMosquitto } from './mosquitto.js';
import { until } from './until.js';
import { startVirtualAgv, type VirtualAgv } from './vda-agv.js';

describe.skipIf(!HAVE_MOSQUITTO)('virtual VDA 5050 AGV on a private mosquitto', () => {
  let broker: RunningMosquitto;
  let agv: VirtualAgv;
  const acl = [
    'user master',
    'topic readwrite uagv/v2/#',
    '',
    'user agv1',
    'topic write uagv/v2/Acme/A1/state',
    'topic write uagv/v2/Acme/A1/visualization',
    'topic write uagv/v2/Acme/A1/connection',
    'topic write uagv/v2/Acme/A1/factsheet',
    'topic read uagv/v2/Acme/A1/order',
    'topic read uagv/v2/Acme/A1/instantActions',
    '',
    'user intruder',
    'topic read uagv/v2/Acme/A1/state',
    '',
  ].join('\n');
  const users = [{ username: 'master', password: 'master-pw' }, { username: 'agv1', password: 'agv1-pw' }, { username: 'intruder', password: 'intruder-pw' }];

  beforeAll(async () => {
    broker = await startMosquitto({ users, acl });
    agv = await startVirtualAgv({ brokerUrl: broker.url, username: 'agv1', password: 'agv1-pw', manufacturer: 'Acme', serialNumber: 'A1' });
  }, 60_000);

  afterAll(async () => {
    await agv?.stop();
    await broker?.close();
  });

  function client(username: string, password: string): Promise<mqtt.MqttClient> {
    const c = mqtt.connect(broker.url, { username, password, reconnectPeriod: 0 });
    return new Promise((resolve, reject) => {
      c.once('connect', () => resolve(c));
      c.once('error', reject);
    });
  }

  it('reports state and counts each instant action it receives by action id', async () => {
    const master = await client('master', 'master-pw');
    const states: Array<{ paused?: boolean; actionStates: Array<{ actionId: string; actionStatus: string }> }> = [];
    master.on('message', (_t, p) => states.push(JSON.parse(p.toString()) as (typeof states)[number]));
    await master.subscribeAsync('uagv/v2/Acme/A1/state', { qos: 0 });
    await until(() => states.length > 0, 10_000, 'a state message');
    const message = (ids: string[]): string => JSON.stringify({
      headerId: 1, timestamp: new Date().toISOString(), version: '2.0.0', manufacturer: 'Acme', serialNumber: 'A1',
      instantActions: ids.map((actionId) => ({ actionId, actionType: 'startPause', blockingType: 'HARD' })),
    });
    await master.publishAsync('uagv/v2/Acme/A1/instantActions', message(['a-1']), { qos: 0 });
    await master.publishAsync('uagv/v2/Acme/A1/instantActions', message(['a-1']), { qos: 0 });
    await until(() => agv.instantActions.length === 2, 10_000, 'both messages');
    expect(agv.countsByActionId()).toEqual(new Map([['a-1', 2]]));
    await until(() => states.some((s) => s.paused === true && s.actionStates.some((a) => a.actionId === 'a-1' && a.actionStatus === 'FINISHED')), 10_000, 'paused, action finished');
    expect(agv.state().paused).toBe(true);
    await master.endAsync();
  });

  it('another user can neither log in with a wrong password nor write to the AGV topics', async () => {
    await expect(client('agv1', 'wrong')).rejects.toThrow();
    const intruder = await client('intruder', 'intruder-pw');
    await intruder.publishAsync('uagv/v2/Acme/A1/instantActions', JSON.stringify({ instantActions: [{ actionId: 'evil', actionType: 'startPause', blockingType: 'HARD' }] }), { qos: 1 });
    const master = await client('master', 'master-pw');
    // An ordering marker from master: once it arrived, the intruder's earlier message would have too.
    await master.publishAsync('uagv/v2/Acme/A1/instantActions', JSON.stringify({
      headerId: 2, timestamp: new Date().toISOString(), version: '2.0.0', manufacturer: 'Acme', serialNumber: 'A1',
      instantActions: [{ actionId: 'marker', actionType: 'stopPause', blockingType: 'HARD' }],
    }), { qos: 1 });
    await until(() => agv.countsByActionId().has('marker'), 10_000, 'the marker');
    expect(agv.countsByActionId().has('evil')).toBe(false);
    await intruder.endAsync();
    await master.endAsync();
  });
});
