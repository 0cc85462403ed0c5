/**
 * Master control against a third-party AGV (vda-5050-lib's AgvController + VirtualAgvAdapter) over a
 * plain aedes broker: online/offline, telemetry batches, delivery states from the robot's state,
 * exactly once by action id across a master control restart and a broker restart.
 */
import { create, fromBinary, type MessageInitShape } from '@bufbuild/protobuf';
import mqtt from 'mqtt';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgvController } from 'vda-5050-lib';
import { CommandAck_Status, CommandSchema, type Command, type CommandAck, type CommandPolicy, type HealthReport, type MissionStatus } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { TelemetryBatchSchema, type TelemetryBatch } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import type { RobotLinkListener } from '../../src/protocol/robot-link.js';
import { MapFrame } from '../../src/vda5050/link/map-frame.js';
import { externalBroker } from '../../src/vda5050/broker/mqtt-session.js';
import { Vda5050Link } from '../../src/vda5050/link/link.js';
import { until } from '../support/until.js';
import { factsheetOf, identitiesOf, scriptedRobot, startAgv, startTestBroker, type TestBroker, memoryStopMarks } from './vda-fixtures.js';

const ROBOT = { robotId: 'robot-1', fleetId: 'fleet-1', binding: { manufacturer: 'Acme', serialNumber: 'AGV-1' } };
const frame = new MapFrame();

class Recorder implements RobotLinkListener {
  events: string[] = [];
  acks: CommandAck[] = [];
  batches: TelemetryBatch[] = [];
  health: HealthReport[] = [];
  missions: MissionStatus[] = [];
  policy: CommandPolicy | undefined;
  capabilities: string[] = [];
  unsupported: Readonly<Record<string, string>> | undefined;
  onLinkOpening(robotId: string): void {
    this.events.push(`opening ${robotId}`);
  }
  onOnline(robotId: string, info: Parameters<NonNullable<RobotLinkListener['onOnline']>>[1]): void {
    this.events.push(`online ${robotId}`);
    this.policy = info.policy;
    this.capabilities = info.capabilities;
    this.unsupported = info.unsupported;
  }
  onOffline(robotId: string, reason: string): void {
    this.events.push(`offline ${robotId} ${reason}`);
  }
  onAck(_robotId: string, ack: CommandAck): void {
    this.acks.push(ack);
  }
  onMissionStatus(_robotId: string, status: MissionStatus): void {
    this.missions.push(status);
  }
  onHealthReport(_robotId: string, report: HealthReport): void {
    this.health.push(report);
  }
  telemetrySink(): (batch: Uint8Array) => void {
    return (b) => this.batches.push(fromBinary(TelemetryBatchSchema, b));
  }
  ackOf(commandId: string): CommandAck | undefined {
    return this.acks.find((a) => a.commandId === commandId);
  }
}

let n = 0;
function command(action: MessageInitShape<typeof CommandSchema>['action']): Command {
  return create(CommandSchema, { commandId: `00000000-0000-7000-8000-${String(++n).padStart(12, '0')}`, seq: BigInt(n), issuedAtMs: BigInt(Date.now()), action });
}

/** Every instantActions and order message published to the robot, as a third MQTT client sees them. */
async function spy(url: string): Promise<{ published: Array<{ topic: string; body: Record<string, unknown> }>; end(): Promise<void> }> {
  const c = await mqtt.connectAsync(url, { clientId: `spy-${Math.random()}` });
  const published: Array<{ topic: string; body: Record<string, unknown> }> = [];
  c.on('message', (topic, payload) => published.push({ topic, body: JSON.parse(payload.toString()) as Record<string, unknown> }));
  await c.subscribeAsync(['uagv/v2/+/+/instantActions', 'uagv/v2/+/+/order']);
  return { published, end: () => c.endAsync() };
}

function actionIdsPublished(s: { published: Array<{ body: Record<string, unknown> }> }, id: string): number {
  return s.published.filter((p) => Array.isArray(p.body.instantActions) && (p.body.instantActions as Array<{ actionId: string }>).some((a) => a.actionId === id)).length;
}

function actionStatus(agv: AgvController, id: string): string | undefined {
  return agv.currentState.actionStates?.find((a) => a.actionId === id)?.actionStatus;
}

describe('VDA 5050 master control against vda-5050-lib', () => {
  let broker: TestBroker;
  let link: Vda5050Link;
  let agv: AgvController;
  let watch: Awaited<ReturnType<typeof spy>>;
  const rec = new Recorder();
  const log = pino({ enabled: false });
  const connect = (): Promise<Vda5050Link> => Vda5050Link.connect({ broker: externalBroker({ url: broker.url, username: '', password: '', interfaceName: 'uagv', version: '2.0.0' }), stopMarks: memoryStopMarks(), identities: identitiesOf([ROBOT]), log, frame });

  beforeAll(async () => {
    broker = await startTestBroker();
    watch = await spy(broker.url);
    link = await connect();
    link.listen(rec);
    agv = await startAgv(broker.url, ROBOT.binding, { x: 10, y: 20 }, { speed: 5 });
  });

  afterAll(async () => {
    await agv?.stop().catch(() => undefined);
    await link?.close();
    await watch?.end();
    await broker?.close();
  });

  it('takes the robot online with its first state, link opening first; its state becomes telemetry and a health report', async () => {
    await until(() => link.isOnline(ROBOT.robotId), 10_000, 'the robot online');
    expect(rec.events.slice(0, 2)).toEqual(['opening robot-1', 'online robot-1']);
    expect(rec.unsupported?.force_reset).toMatch(/reset/);
    await until(() => rec.batches.length > 0 && rec.health.length > 0, 10_000, 'telemetry and health');
    const s = rec.batches.at(-1)!.samples[0]!;
    const at = frame.toLatLon(10, 20);
    expect(s.position?.latitude).toBeCloseTo(at.latitude, 6);
    expect(s.position?.longitude).toBeCloseTo(at.longitude, 6);
    expect(s.pose?.xM).toBeCloseTo(10, 3);
    expect(s.battery?.percent).toBeGreaterThan(0);
    expect(s.mode).toBe('autonomous');
    expect(rec.health.at(-1)!.devices[0]!.deviceId).toBe('battery');
  });

  it('takes the factsheet\'s instant actions into the command policy', async () => {
    // vda-5050-lib's AGV answers no factsheetRequest: the factsheet is published here as a robot does (retained).
    const robotSide = await mqtt.connectAsync(broker.url, { clientId: 'factsheet-publisher' });
    const factsheet = factsheetOf(ROBOT.binding, [
      { actionType: 'startCharging', actionScopes: ['INSTANT'] },
      { actionType: 'pick', actionScopes: ['NODE'], actionParameters: [{ key: 'stationType', valueDataType: 'STRING' }] },
    ]);
    await robotSide.publishAsync('uagv/v2/Acme/AGV-1/factsheet', JSON.stringify(factsheet), { retain: true });
    await robotSide.endAsync();
    await until(() => rec.policy?.actions.some((a) => a.name === 'startCharging') === true, 10_000, 'the factsheet policy');
    expect(rec.policy!.actions.map((a) => a.name)).toEqual(['startCharging']);
    expect(rec.capabilities).toEqual(expect.arrayContaining(['stop', 'go_to', 'pick']));
    expect(rec.policy!.goToArea?.ring).toHaveLength(4);
  });

  it('announces a factsheet again only when it changed (a repeated one is read, not announced)', async () => {
    const robotSide = await mqtt.connectAsync(broker.url, { clientId: 'factsheet-repeater' });
    const actions = [{ actionType: 'startCharging', actionScopes: ['INSTANT'] }];
    const onlines = (): number => rec.events.filter((e) => e === `online ${ROBOT.robotId}`).length;
    const accepted = (): number => (link as unknown as { gate: { stats(): { accepted: number } } }).gate.stats().accepted;
    // This factsheet differs from the last one (announced once), then comes 19 more times unchanged.
    const atFirst = accepted();
    const beforeFirst = onlines();
    await robotSide.publishAsync('uagv/v2/Acme/AGV-1/factsheet', JSON.stringify({ ...factsheetOf(ROBOT.binding, actions), headerId: 1001 }));
    await until(() => accepted() > atFirst, 10_000, 'the first factsheet read');
    const first = onlines();
    expect(first).toBe(beforeFirst + 1);
    const before = accepted();
    const coalescedBefore = link.stats().coalesced;
    for (let i = 2; i <= 20; i++) {
      await robotSide.publishAsync('uagv/v2/Acme/AGV-1/factsheet', JSON.stringify({ ...factsheetOf(ROBOT.binding, actions), headerId: 1000 + i }));
    }
    // Each of the 19 read, or replaced unread by a newer one.
    await until(() => accepted() - before + link.stats().coalesced - coalescedBefore >= 19, 10_000, 'the repeated factsheets read');
    expect(onlines()).toBe(first);
    await robotSide.publishAsync('uagv/v2/Acme/AGV-1/factsheet', JSON.stringify({ ...factsheetOf(ROBOT.binding, [...actions, { actionType: 'stopCharging', actionScopes: ['INSTANT'] }]), headerId: 2000 }));
    await until(() => rec.policy?.actions.some((a) => a.name === 'stopCharging') === true, 10_000, 'the changed factsheet announced');
    expect(onlines()).toBe(first + 1);
    await robotSide.endAsync();
  });

  it('drives a go-to order to its end; received only once the state shows the order id', async () => {
    const target = frame.toLatLon(16, 28);
    const go = command({ case: 'goTo', value: { latitude: target.latitude, longitude: target.longitude, hasHeading: false, headingDeg: 0, maxSpeedMps: 0 } });
    expect(link.send(ROBOT.robotId, go)).toBe(true);
    await until(() => rec.ackOf(go.commandId) !== undefined, 10_000, 'the go-to ack');
    expect(rec.ackOf(go.commandId)!.status).toBe(CommandAck_Status.RECEIVED);
    expect(agv.currentState.orderId).toBe(go.commandId);
    await until(() => agv.currentState.nodeStates.length === 0 && !agv.currentState.driving, 15_000, 'the order driven to its end');
    expect(agv.currentState.agvPosition!.x).toBeCloseTo(16, 0);
    expect(agv.currentState.agvPosition!.y).toBeCloseTo(28, 0);
    // The next order starts from the position master control last heard, so wait until it has heard the end.
    await until(() => {
      const pose = rec.batches.at(-1)?.samples.at(-1)?.pose;
      return pose !== undefined && Math.hypot(pose.xM - 16, pose.yM - 28) < 0.1;
    }, 10_000, 'master control hearing the order\'s end');
  });

  it('stops (startPause) and releases (cancelOrder) a robot under way: FINISHED in its state, received', async () => {
    const far = frame.toLatLon(100, 28);
    const go = command({ case: 'goTo', value: { latitude: far.latitude, longitude: far.longitude, hasHeading: false, headingDeg: 0, maxSpeedMps: 0 } });
    link.send(ROBOT.robotId, go);
    await until(() => agv.currentState.driving, 10_000, 'the robot driving');
    const stop = command({ case: 'stop', value: { reason: 'test' } });
    link.send(ROBOT.robotId, stop);
    await until(() => actionStatus(agv, stop.commandId) === 'FINISHED', 10_000, 'the stop FINISHED');
    await until(() => rec.ackOf(stop.commandId) !== undefined, 10_000, 'the stop ack');
    expect(rec.ackOf(stop.commandId)!.status).toBe(CommandAck_Status.RECEIVED);
    expect(agv.currentState.paused).toBe(true);
    const release = command({ case: 'release', value: {} });
    link.send(ROBOT.robotId, release);
    await until(() => actionStatus(agv, release.commandId) === 'FINISHED', 10_000, 'the release FINISHED');
    await until(() => rec.ackOf(release.commandId)?.status === CommandAck_Status.RECEIVED, 10_000, 'the release ack');
    const start = command({ case: 'start', value: {} });
    link.send(ROBOT.robotId, start);
    await until(() => rec.ackOf(start.commandId) !== undefined && !agv.currentState.paused, 10_000, 'the robot resumed');
    // A resend of an id the state shows is acknowledged again, not published again.
    const before = actionIdsPublished(watch, stop.commandId);
    expect(before).toBe(1);
    rec.acks = [];
    link.send(ROBOT.robotId, stop);
    await until(() => rec.ackOf(stop.commandId) !== undefined, 10_000, 'the resend answered');
    expect(actionIdsPublished(watch, stop.commandId)).toBe(1);
  });

  it('runs a mission as an order: steps with a place become nodes, its status goes running -> completed', async () => {
    const runId = 'run-1';
    const start = command({ case: 'missionStart', value: { runId, missionId: 'm-1', name: 'two stops', steps: [{ kind: 'drive_to', configJson: JSON.stringify({ x_m: 20, y_m: 28 }) }, { kind: 'drive_to', configJson: JSON.stringify({ x_m: 20, y_m: 34 }) }], parametersJson: '{}' } });
    link.send(ROBOT.robotId, start);
    await until(() => rec.ackOf(start.commandId)?.status === CommandAck_Status.RECEIVED, 10_000, 'the mission start received');
    expect(agv.currentState.orderId).toBe(`mission:${runId}`);
    await until(() => rec.missions.some((m) => m.runId === runId && m.state === 'completed'), 20_000, 'the run completed');
    const states = rec.missions.filter((m) => m.runId === runId).map((m) => m.state);
    expect(states[0]).toBe('running');
    const done = rec.missions.find((m) => m.state === 'completed')!;
    expect(done.missionId).toBe('m-1');
    expect(done.progressPct).toBe(100);
    expect(agv.currentState.agvPosition!.y).toBeCloseTo(34, 0);
  });

  it('publishes a mission order once when it is resent before any state answered it, and after a restart not again', async () => {
    const runId = 'run-resend';
    const orderId = `mission:${runId}`;
    const start = command({ case: 'missionStart', value: { runId, missionId: 'm-2', name: 'one stop', steps: [{ kind: 'drive_to', configJson: JSON.stringify({ x_m: 20, y_m: 40 }) }], parametersJson: '{}' } });
    const copies = (): Array<Record<string, unknown>> => watch.published.filter((p) => p.body.orderId === orderId).map((p) => p.body);
    // A resend of the command service's before any state was read since the first: the robot may not
    // have answered yet, so it is asked for its state rather than sent the order twice.
    link.send(ROBOT.robotId, start);
    link.send(ROBOT.robotId, start);
    await until(() => rec.ackOf(start.commandId)?.status === CommandAck_Status.RECEIVED, 10_000, 'the mission start received');
    await until(() => copies().length === 1, 10_000, 'the order seen on the broker');
    expect(copies()[0]!.orderUpdateId).toBe(0);
    await until(() => rec.missions.some((m) => m.runId === runId && m.state === 'completed'), 20_000, 'the run completed');
    expect(agv.currentState.errors).toEqual([]);
    expect(agv.currentState.orderUpdateId).toBe(0);
    expect(agv.currentState.agvPosition!.y).toBeCloseTo(40, 0);
    // After a master control restart the robot's first state shows the order: acknowledged, not published.
    await link.close();
    link = await connect();
    link.listen(rec);
    await until(() => link.isOnline(ROBOT.robotId), 10_000, 'the robot online again');
    rec.acks = [];
    link.send(ROBOT.robotId, start);
    await until(() => rec.ackOf(start.commandId) !== undefined, 10_000, 'the resend answered');
    expect(rec.ackOf(start.commandId)!.status).toBe(CommandAck_Status.RECEIVED);
    expect(copies()).toHaveLength(1);
  });

  it('answers a command VDA 5050 cannot carry with a rejection naming why', async () => {
    const reset = command({ case: 'forceReset', value: {} });
    expect(link.send(ROBOT.robotId, reset)).toBe(true);
    await until(() => rec.ackOf(reset.commandId) !== undefined, 10_000, 'the reset answer');
    expect(rec.ackOf(reset.commandId)!.status).toBe(CommandAck_Status.REJECTED);
    expect(rec.ackOf(reset.commandId)!.reason).toMatch(/^not_supported: VDA 5050 defines no reset/);
  });

  it('after a master control restart, does not publish again what the robot\'s first state shows', async () => {
    const stop = command({ case: 'stop', value: { reason: 'before the restart' } });
    link.send(ROBOT.robotId, stop);
    await until(() => actionStatus(agv, stop.commandId) === 'FINISHED', 10_000, 'the stop FINISHED');
    await link.close();
    const fresh = new Recorder();
    link = await connect();
    link.listen(fresh);
    await until(() => link.isOnline(ROBOT.robotId), 10_000, 'the robot online again');
    link.send(ROBOT.robotId, stop);
    await until(() => fresh.ackOf(stop.commandId) !== undefined, 10_000, 'the resend answered');
    expect(fresh.ackOf(stop.commandId)!.status).toBe(CommandAck_Status.RECEIVED);
    expect(actionIdsPublished(watch, stop.commandId)).toBe(1);
    link.listen(rec);
    const start = command({ case: 'start', value: {} });
    link.send(ROBOT.robotId, start);
    await until(() => actionStatus(agv, start.commandId) === 'FINISHED' && !agv.currentState.paused, 10_000, 'the robot resumed');
  });

  it('after a broker restart, robots come back and a shown action is not sent again', async () => {
    const stop = command({ case: 'stop', value: { reason: 'before the broker restart' } });
    link.send(ROBOT.robotId, stop);
    await until(() => actionStatus(agv, stop.commandId) === 'FINISHED', 10_000, 'the stop FINISHED');
    expect(actionIdsPublished(watch, stop.commandId)).toBe(1);
    const port = broker.port;
    rec.events = [];
    await watch.end();
    await broker.close();
    await until(() => !link.isOnline(ROBOT.robotId), 10_000, 'the robot offline with the broker gone');
    broker = await startTestBroker(port);
    watch = await spy(broker.url);
    await until(() => link.isOnline(ROBOT.robotId), 20_000, 'the robot online after the broker restart');
    rec.acks = [];
    link.send(ROBOT.robotId, stop);
    await until(() => rec.ackOf(stop.commandId) !== undefined, 10_000, 'the resend answered');
    expect(rec.ackOf(stop.commandId)!.status).toBe(CommandAck_Status.RECEIVED);
    expect(actionIdsPublished(watch, stop.commandId)).toBe(0);
  });

  it('reports the robot offline when it disconnects (connection OFFLINE)', async () => {
    rec.events = [];
    await agv.stop();
    await until(() => !link.isOnline(ROBOT.robotId), 10_000, 'the robot offline');
    expect(rec.events.some((e) => e.startsWith('offline robot-1 the robot disconnected'))).toBe(true);
    expect(link.send(ROBOT.robotId, command({ case: 'stop', value: { reason: 'x' } }))).toBe(false);
  });
});

describe('VDA 5050 delivery against a scripted robot', () => {
  let broker: TestBroker;
  let link: Vda5050Link;
  const rec = new Recorder();
  const A = { robotId: 'robot-a', fleetId: 'fleet-1', binding: { manufacturer: 'Acme', serialNumber: 'A' } };
  const B = { robotId: 'robot-b', fleetId: 'fleet-1', binding: { manufacturer: 'Acme', serialNumber: 'B' } };
  let a: Awaited<ReturnType<typeof scriptedRobot>>;
  let b: Awaited<ReturnType<typeof scriptedRobot>>;

  beforeAll(async () => {
    broker = await startTestBroker();
    link = await Vda5050Link.connect({ broker: externalBroker({ url: broker.url, username: '', password: '', interfaceName: 'uagv', version: '2.0.0' }), stopMarks: memoryStopMarks(), identities: identitiesOf([A, B]), log: pino({ enabled: false }), frame });
    link.listen(rec);
    a = await scriptedRobot(broker.url, A.binding);
    b = await scriptedRobot(broker.url, B.binding);
    await a.online();
    await b.online();
    await a.publishState();
    await b.publishState();
    await until(() => link.isOnline(A.robotId) && link.isOnline(B.robotId), 10_000, 'both robots online');
  });

  afterAll(async () => {
    await a?.end();
    await b?.end();
    await link?.close();
    await broker?.close();
  });

  /** Publishes a state and waits until the link has read it (its telemetry batch arrived). */
  const stateRead = async (r: typeof a, patch: Record<string, unknown> = {}): Promise<void> => {
    const before = rec.batches.length;
    await r.publishState(patch);
    await until(() => rec.batches.length > before, 10_000, 'the state read');
  };

  it('acknowledges a command only once the robot\'s state shows its action id', async () => {
    const stop = command({ case: 'stop', value: { reason: 'scripted' } });
    expect(link.send(A.robotId, stop)).toBe(true);
    await until(() => a.actionIds().includes(stop.commandId), 10_000, 'the stop published');
    await stateRead(a);
    expect(rec.ackOf(stop.commandId)).toBeUndefined();
    await stateRead(a, { actionStates: [{ actionId: stop.commandId, actionType: 'startPause', actionStatus: 'WAITING' }] });
    await until(() => rec.ackOf(stop.commandId) !== undefined, 10_000, 'the stop ack');
    expect(rec.ackOf(stop.commandId)!.status).toBe(CommandAck_Status.RECEIVED);
  });

  it('acknowledges a stop while reading the state that shows it, before the event loop moves on', async () => {
    // The command service issues an ack's LMDB commit at the end of the turn it hears it: an ack
    // heard from a setImmediate would put that commit (and the REST answer) one loop iteration later.
    const stop = command({ case: 'stop', value: { reason: 'read timing' } });
    expect(link.send(A.robotId, stop)).toBe(true);
    await until(() => a.actionIds().includes(stop.commandId), 10_000, 'the stop published');
    let immediateRan: boolean | null = null;
    // Master control's MQTT client, inside its session on this (external) broker.
    const client = (link as unknown as { session: { client: mqtt.MqttClient } }).session.client;
    const mark = (_topic: string, payload: Buffer): void => {
      if (!payload.toString().includes(stop.commandId)) return;
      immediateRan = false;
      setImmediate(() => {
        immediateRan = true;
      });
    };
    client.prependListener('message', mark);
    let ranBeforeAck: boolean | null = null;
    const unlisten = link.listen({
      onAck: (_robotId, ack) => {
        if (ack.commandId === stop.commandId) ranBeforeAck = immediateRan;
      },
    });
    try {
      await a.publishState({ actionStates: [{ actionId: stop.commandId, actionType: 'startPause', actionStatus: 'FINISHED' }] });
      await until(() => ranBeforeAck !== null, 10_000, 'the stop ack');
      expect(ranBeforeAck).toBe(false);
    } finally {
      client.removeListener('message', mark);
      unlisten();
    }
  });

  it('puts a state\'s telemetry after what the listeners of its acks started (the ack\'s commit), in the same turn', async () => {
    const stop = command({ case: 'stop', value: { reason: 'commit first' } });
    expect(link.send(A.robotId, stop)).toBe(true);
    await until(() => a.actionIds().includes(stop.commandId), 10_000, 'the stop published');
    let atAck = -1;
    let atListenersImmediate = -1;
    const unlisten = link.listen({
      onAck: (_robotId, ack) => {
        if (ack.commandId !== stop.commandId) return;
        atAck = rec.batches.length;
        // What the command service starts on an ack is queued here, as lmdb-js queues its commit.
        setImmediate(() => {
          atListenersImmediate = rec.batches.length;
        });
      },
    });
    try {
      await a.publishState({ actionStates: [{ actionId: stop.commandId, actionType: 'startPause', actionStatus: 'FINISHED' }] });
      await until(() => atListenersImmediate >= 0, 10_000, 'the stop ack');
      expect(atListenersImmediate).toBe(atAck);
      await until(() => rec.batches.length > atAck, 10_000, 'the state\'s telemetry');
    } finally {
      unlisten();
    }
  });

  it('does not send a pick twice to a robot that lists it only when it starts it, until its session changes', async () => {
    const pick = command({ case: 'invokeAction', value: { name: 'pick', argumentsJson: '{}' } });
    expect(link.send(A.robotId, pick)).toBe(true);
    await until(() => a.actionIds().includes(pick.commandId), 10_000, 'the pick published');
    // The robot answers with states that do not list the pick yet (it lists an action when it starts it).
    await stateRead(a);
    await stateRead(a);
    expect(link.send(A.robotId, pick)).toBe(true); // a resend: asks for the state instead
    await until(() => a.received.some((r) => JSON.stringify(r.body).includes('stateRequest')), 10_000, 'a state request');
    await stateRead(a);
    expect(a.actionIds().filter((id) => id === pick.commandId)).toHaveLength(1);
    // A new session of the robot's (ONLINE): the pick may not have reached it, so a resend publishes it.
    await a.online();
    await stateRead(a);
    expect(link.send(A.robotId, pick)).toBe(true);
    await until(() => a.actionIds().filter((id) => id === pick.commandId).length === 2, 10_000, 'the pick published again');
    await stateRead(a, { actionStates: [{ actionId: pick.commandId, actionType: 'pick', actionStatus: 'RUNNING' }] });
    await until(() => rec.ackOf(pick.commandId) !== undefined, 10_000, 'the pick ack');
  });

  it('keeps a robot\'s stop mark across a master control restart: an older start is not published after it', async () => {
    const marks = memoryStopMarks();
    const open = (): Promise<Vda5050Link> => Vda5050Link.connect({ broker: externalBroker({ url: broker.url, username: '', password: '', interfaceName: 'uagv', version: '2.0.0' }), stopMarks: marks, identities: identitiesOf([B]), clientId: `restart-${Math.random()}`, log: pino({ enabled: false }), frame });
    const first = await open();
    const start = command({ case: 'start', value: {} });
    const stop = command({ case: 'stop', value: { reason: 'after the start' } });
    await b.publishState();
    await until(() => first.isOnline(B.robotId), 10_000, 'B online at the first link');
    expect(first.send(B.robotId, stop)).toBe(true);
    await until(() => b.actionIds().includes(stop.commandId), 10_000, 'the stop published');
    // The robot takes the stop: its state shows it (the mark is kept from here on).
    const acked: string[] = [];
    first.listen({ onAck: (_robotId, ack) => acked.push(ack.commandId) });
    await b.publishState({ paused: true, actionStates: [{ actionId: stop.commandId, actionType: 'startPause', actionStatus: 'FINISHED' }] });
    await until(() => acked.includes(stop.commandId), 10_000, 'the stop acknowledged');
    await first.close();
    const second = await open();
    const answers: CommandAck[] = [];
    second.listen({ onAck: (_robotId, ack) => answers.push(ack) });
    try {
      // More states since: the robot no longer lists the stop (vda-5050-lib drops an ended action after 5).
      await b.publishState({ paused: true, actionStates: [] });
      await until(() => second.isOnline(B.robotId), 10_000, 'B online at the second link');
      // The start was issued before the stop (lower seq) and got lost: sending it now would undo the stop.
      expect(second.send(B.robotId, start)).toBe(true);
      await until(() => answers.some((x) => x.commandId === start.commandId), 10_000, 'the start answered');
      expect(answers.find((x) => x.commandId === start.commandId)).toMatchObject({ status: CommandAck_Status.REJECTED, reason: 'superseded_by_stop' });
      expect(b.actionIds()).not.toContain(start.commandId);
    } finally {
      await second.close();
    }
  });

  it('records a FAILED action (with the robot\'s error) as a rejection naming it', async () => {
    const act = command({ case: 'invokeAction', value: { name: 'startCharging', argumentsJson: '{}' } });
    link.send(A.robotId, act);
    await until(() => a.actionIds().includes(act.commandId), 10_000, 'the action published');
    await stateRead(a, {
      actionStates: [{ actionId: act.commandId, actionType: 'startCharging', actionStatus: 'FAILED' }],
      errors: [{ errorType: 'noChargingStation', errorLevel: 'WARNING', errorDescription: 'not at a charger', errorReferences: [{ referenceKey: 'actionId', referenceValue: act.commandId }] }],
    });
    await until(() => rec.ackOf(act.commandId) !== undefined, 10_000, 'the action answer');
    expect(rec.ackOf(act.commandId)!.status).toBe(CommandAck_Status.REJECTED);
    expect(rec.ackOf(act.commandId)!.reason).toBe('noChargingStation: not at a charger');
  });

  it('reads a flooding robot\'s states once per read, and another robot\'s stop still goes through', async () => {
    const flood = Array.from({ length: 3000 }, (_, i) => b.publishState({ batteryState: { batteryCharge: 50 + (i % 40), charging: false } }));
    const stop = command({ case: 'stop', value: { reason: 'during a flood' } });
    link.send(A.robotId, stop);
    await until(() => a.actionIds().includes(stop.commandId), 20_000, 'the stop published during the flood');
    await a.publishState({ actionStates: [{ actionId: stop.commandId, actionType: 'startPause', actionStatus: 'FINISHED' }] });
    await until(() => rec.ackOf(stop.commandId) !== undefined, 20_000, 'the stop ack during the flood');
    await Promise.all(flood);
    await until(() => link.stats().coalesced > 0, 20_000, 'coalesced states');
  });

  it('takes a robot offline on its last will (CONNECTIONBROKEN)', async () => {
    rec.events = [];
    b.drop();
    await until(() => !link.isOnline(B.robotId), 10_000, 'robot B offline');
    expect(rec.events).toContain('offline robot-b the robot\'s connection broke (CONNECTIONBROKEN)');
  });
});
