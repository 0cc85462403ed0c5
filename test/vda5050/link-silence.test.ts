/**
 * Master control's silence check on an external broker, which cannot tell it that a robot's session
 * ended: a robot that goes quiet without a last will is asked for its state, then taken offline, and
 * its next state brings it back. Times shortened through the link's `silence` option.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { externalBroker } from '../../src/vda5050/broker/mqtt-session.js';
import { STATE_REQUEST_EVERY_MS, Vda5050Link } from '../../src/vda5050/link/link.js';
import { MapFrame } from '../../src/vda5050/link/map-frame.js';
import { until } from '../support/until.js';
import { identitiesOf, scriptedRobot, startTestBroker, type ScriptedRobot, type TestBroker, memoryStopMarks } from './vda-fixtures.js';

const ROBOT = { robotId: 'robot-quiet', fleetId: 'fleet-1', binding: { manufacturer: 'Acme', serialNumber: 'QUIET-1' } };

describe('master control\'s silence check', () => {
  let broker: TestBroker;
  let link: Vda5050Link;
  let robot: ScriptedRobot;
  const offline: string[] = [];

  beforeAll(async () => {
    broker = await startTestBroker();
    link = await Vda5050Link.connect({
      broker: externalBroker({ url: broker.url, username: '', password: '', interfaceName: 'uagv', version: '2.0.0' }), stopMarks: memoryStopMarks(),
      identities: identitiesOf([ROBOT]),
      log: pino({ enabled: false }),
      frame: new MapFrame(),
      // Asked after the state request master control sends on connecting (at most one per STATE_REQUEST_EVERY_MS).
      silence: { askAfterMs: STATE_REQUEST_EVERY_MS + 500, offlineAfterMs: STATE_REQUEST_EVERY_MS + 1_500, checkEveryMs: 100 },
    });
    link.listen({ onOffline: (_robotId, reason) => offline.push(reason) });
    robot = await scriptedRobot(broker.url, ROBOT.binding, { noWill: true });
  });

  afterAll(async () => {
    await robot?.end();
    await link?.close();
    await broker?.close();
  });

  it('asks a quiet robot for its state, takes it offline when it stays quiet, and back with its next state', async () => {
    await robot.publishState();
    await until(() => link.isOnline(ROBOT.robotId), 10_000, 'the robot online');
    const requests = (): number => robot.received.filter((r) => ((r.body.instantActions ?? []) as Array<{ actionType: string }>).some((a) => a.actionType === 'stateRequest')).length;
    const before = requests();
    // The robot says nothing more (and does not answer the state request).
    await until(() => requests() > before, 10_000, 'a state request to the quiet robot');
    expect(link.isOnline(ROBOT.robotId)).toBe(true);
    await until(() => !link.isOnline(ROBOT.robotId), 10_000, 'the quiet robot offline');
    expect(offline.at(-1)).toMatch(/^no message from the robot for \d+ s$/);
    await robot.publishState();
    await until(() => link.isOnline(ROBOT.robotId), 10_000, 'the robot online again');
  });
});
