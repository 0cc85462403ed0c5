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
import { CommandAck_Status, CommandSchema, type Command, type CommandAck, type CommandPolicy, type HealthReport } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { TelemetryBatchSchema, type TelemetryBatch } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import type { RobotLinkListener } from '../../src/protocol/robot-link.js';
import { MapFrame } from '../../src/vda5050/link/map-frame.js';
import { Vda5050Link } from '../../src/vda5050/link/link.js';
import { until } from '../support/until.js';
import { identitiesOf, startAgv, startTestBroker, type TestBroker } from './vda-fixtures.js';

const ROBOT = { robotId: 'robot-1', fleetId: 'fleet-1', binding: { manufacturer: 'Acme', serialNumber: 'AGV-1' } };
const frame = new MapFrame();

class Recorder implements RobotLinkListener {
  events: string[] = [];
  acks: CommandAck[] = [];
  batches: TelemetryBatch[] = [];
  health: HealthReport[] = [];
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
  const connect = (): Promise<Vda5050Link> => Vda5050Link.connect({ broker: { url: broker.url, username: '', password: '', interfaceName: 'uagv', version: '2.0.0' }, identities: identitiesOf([ROBOT]), log, frame });

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
    const factsheet = {
      headerId: 0, timestamp: new Date().toISOString(), version: '2.0.0', manufacturer: 'Acme', serialNumber: 'AGV-1',
      typeSpecification: { seriesName: 'VirtualAGV' },
      protocolFeatures: { optionalParameters: [], agvActions: [{ actionType: 'startCharging', actionScopes: ['INSTANT'] }, { actionType: 'pick', actionScopes: ['NODE'], actionParameters: [{ key: 'stationType', valueDataType: 'STRING' }] }] },
    };
    await robotSide.publishAsync('uagv/v2/Acme/AGV-1/factsheet', JSON.stringify(factsheet), { retain: true });
    await robotSide.endAsync();
    await until(() => rec.policy?.actions.some((a) => a.name === 'startCharging') === true, 10_000, 'the factsheet policy');
    expect(rec.policy!.actions.map((a) => a.name)).toEqual(['startCharging']);
    expect(rec.capabilities).toEqual(expect.arrayContaining(['stop', 'go_to', 'pick']));
    expect(rec.policy!.goToArea?.ring).toHaveLength(4);
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
