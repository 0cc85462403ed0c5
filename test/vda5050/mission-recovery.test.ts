/**
 * A mission order master control did not send since it started (a gateway restart): its MissionOrder
 * is rebuilt from the run's MissionStart with outbound.ts's own builder, so the restarted link reports
 * the same status as the link that sent the order (mission id, progress, step); a run the gateway
 * does not know is estimated from the nodes left, without a mission id, and logged once.
 */
import { create } from '@bufbuild/protobuf';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandSchema, MissionStartSchema, type MissionStart, type MissionStatus } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import type { RobotLinkListener } from '../../src/protocol/robot-link.js';
import { externalBroker } from '../../src/vda5050/broker/mqtt-session.js';
import { Vda5050Link } from '../../src/vda5050/link/link.js';
import { MapFrame } from '../../src/vda5050/link/map-frame.js';
import { missionOrderOf, outboundOf } from '../../src/vda5050/link/outbound.js';
import type { VdaState } from '../../src/vda5050/link/messages.js';
import { until } from '../support/until.js';
import { identitiesOf, scriptedRobot, startTestBroker, type ScriptedRobot, type TestBroker, memoryStopMarks } from './vda-fixtures.js';

const frame = new MapFrame();
const ROBOT = { robotId: 'robot-r', fleetId: 'fleet-1', binding: { manufacturer: 'Acme', serialNumber: 'R' } };

// A step without a place first (a start node action), lat/lon and map places, one more in between.
const start = (runId: string, missionId: string): MissionStart => create(MissionStartSchema, {
  runId,
  missionId,
  name: 'mixed',
  steps: [
    { kind: 'beep', configJson: '{}' },
    { kind: 'drive_to', configJson: JSON.stringify({ x_m: 10, y_m: 0 }) },
    { kind: 'drive_to', configJson: JSON.stringify(frame.toLatLon(20, 0)) },
    { kind: 'pick', configJson: JSON.stringify({ stationType: 'floor' }) },
    { kind: 'drive_to', configJson: JSON.stringify({ x_m: 30, y_m: 0 }) },
    { kind: 'drive_to', configJson: JSON.stringify({ x_m: 40, y_m: 0 }) },
  ],
  parametersJson: '{}',
});

describe('the MissionOrder rebuilt from a MissionStart', () => {
  it('equals the one outboundOf sends: same node count and step of each node', () => {
    const s = start('run-a', 'm-a');
    const state = { agvPosition: { x: 1, y: 2, theta: 0, mapId: 'site', positionInitialized: true }, lastNodeId: 'home' } as unknown as VdaState;
    const sent = outboundOf(create(CommandSchema, { commandId: 'c-1', action: { case: 'missionStart', value: s } }), state, frame);
    if (sent.kind !== 'order') throw new Error(`not an order: ${sent.kind}`);
    const rebuilt = missionOrderOf(s, frame);
    expect(rebuilt).toEqual(sent.mission);
    expect(rebuilt.stepOfNode).toEqual([-1, 1, 2, 4, 5]);
    expect(rebuilt.stepOfNode).toHaveLength(sent.order.nodes.length);
  });
});

describe('a mission order after a master control restart', () => {
  let broker: TestBroker;
  let robot: ScriptedRobot;
  const links: Vda5050Link[] = [];
  const logLines: string[] = [];
  const runs = new Map<string, MissionStart>();

  /** A link with its own recorder of mission statuses; `known` decides which runs it can rebuild. */
  const connect = async (): Promise<{ link: Vda5050Link; statuses: MissionStatus[] }> => {
    const log = pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) });
    const link = await Vda5050Link.connect({
      broker: externalBroker({ url: broker.url, username: '', password: '', interfaceName: 'uagv', version: '2.0.0' }), stopMarks: memoryStopMarks(),
      identities: identitiesOf([ROBOT]),
      log,
      frame,
      missionStartOf: (robotId, runId) => (robotId === ROBOT.robotId ? runs.get(runId) ?? null : null),
    });
    links.push(link);
    const statuses: MissionStatus[] = [];
    const listener: RobotLinkListener = { onMissionStatus: (_id, st) => void statuses.push(st) };
    link.listen(listener);
    return { link, statuses };
  };

  beforeAll(async () => {
    broker = await startTestBroker();
    robot = await scriptedRobot(broker.url, ROBOT.binding);
    await robot.online();
  });

  afterAll(async () => {
    await robot?.end();
    for (const l of links) await l.close();
    await broker?.close();
  });

  /** The robot's state `legs` legs into `order`: the nodes not yet reached left. */
  const under = (order: Record<string, unknown>, legs: number): Record<string, unknown> => ({
    orderId: order.orderId,
    driving: true,
    nodeStates: (order.nodes as Array<{ nodeId: string; sequenceId: number; released: boolean }>).slice(1 + legs).map(({ nodeId, sequenceId, released }) => ({ nodeId, sequenceId, released })),
  });

  const statusAfter = async (statuses: MissionStatus[], patch: Record<string, unknown>, runId: string): Promise<MissionStatus> => {
    const before = statuses.length;
    await robot.publishState(patch);
    await until(() => statuses.slice(before).some((s) => s.runId === runId), 10_000, 'a mission status');
    return statuses.slice(before).find((s) => s.runId === runId)!;
  };

  it('reports what the link that sent it reported: mission id, progress and step, and completes at the last step', async () => {
    runs.set('run-known', start('run-known', 'm-known'));
    const first = await connect();
    await robot.publishState();
    await until(() => first.link.isOnline(ROBOT.robotId), 10_000, 'the robot online');
    first.link.send(ROBOT.robotId, create(CommandSchema, { commandId: 'c-known', issuedAtMs: BigInt(Date.now()), action: { case: 'missionStart', value: runs.get('run-known')! } }));
    await until(() => robot.received.some((r) => r.topic === 'order'), 10_000, 'the order published');
    const order = robot.received.find((r) => r.topic === 'order')!.body;
    const sentView = await statusAfter(first.statuses, under(order, 2), 'run-known');
    expect(sentView).toMatchObject({ missionId: 'm-known', state: 'running', progressPct: 50, stepIndex: 2 });
    await first.link.close();

    const second = await connect();
    const rebuiltView = await statusAfter(second.statuses, under(order, 2), 'run-known');
    expect({ ...rebuiltView, tsMs: 0n }).toEqual({ ...sentView, tsMs: 0n });
    const next = await statusAfter(second.statuses, under(order, 3), 'run-known');
    expect(next).toMatchObject({ missionId: 'm-known', progressPct: 75, stepIndex: 4 });
    const done = await statusAfter(second.statuses, { ...under(order, 4), driving: false }, 'run-known');
    expect(done).toMatchObject({ missionId: 'm-known', state: 'completed', progressPct: 100, stepIndex: 5 });
    await second.link.close();
  });

  it('estimates a run it does not know from the nodes left, without a mission id, and logs it once', async () => {
    for (const l of links.splice(0)) await l.close();
    const { link, statuses } = await connect();
    const orderId = 'mission:run-unknown';
    const nodes = (n: number) => Array.from({ length: n }, (_, i) => ({ nodeId: `${orderId}/n${5 - n + i}`, sequenceId: 2 * (5 - n + i), released: true }));
    const first = await statusAfter(statuses, { orderId, driving: true, nodeStates: nodes(3) }, 'run-unknown');
    expect(link.isOnline(ROBOT.robotId)).toBe(true);
    // Three nodes left on first sight: taken as the whole order (start node + 3).
    expect(first).toMatchObject({ missionId: '', state: 'running', progressPct: 0, stepIndex: 0 });
    const later = await statusAfter(statuses, { orderId, driving: true, nodeStates: nodes(1) }, 'run-unknown');
    expect(later).toMatchObject({ missionId: '', progressPct: (100 * 2) / 3, stepIndex: 1 });
    const warned = logLines.filter((l) => l.includes(orderId));
    expect(warned).toHaveLength(1);
    expect(JSON.parse(warned[0]!)).toMatchObject({ level: 40, robotId: ROBOT.robotId, orderId });
  });
});
