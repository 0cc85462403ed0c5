/**
 * Messages as a third-party VDA 5050 robot sends them: vda-5050-lib's AgvController driving its
 * VirtualAgvAdapter, connected to an in-process aedes broker, driven by the lib's MasterController
 * through one order (so `state` carries node, edge and action states) and a factsheet request. The
 * raw payload bytes are captured by a plain MQTT subscriber.
 */
import { createServer, type AddressInfo } from 'node:net';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { AgvController, BlockingType, MasterController, VirtualAgvAdapter, type AgvId } from 'vda-5050-lib';
import { until } from '../support/until.js';

export interface CapturedMessage {
  topic: string;
  payload: Buffer;
}

export const LIB_AGV: AgvId = { manufacturer: 'LibCo', serialNumber: 'virtual-1' };

/** Runs the virtual AGV through one order; returns every message it published (connection, state, visualization, factsheet). */
export async function captureLibAgvMessages(): Promise<CapturedMessage[]> {
  const broker = await Aedes.createBroker();
  const server = createServer(broker.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const brokerUrl = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const captured: CapturedMessage[] = [];
  const sub = await mqtt.connectAsync(brokerUrl, { clientId: 'capture' });
  sub.on('message', (topic, payload) => captured.push({ topic, payload: Buffer.from(payload) }));
  await sub.subscribeAsync('uagv/v2/#', { qos: 1 });
  const client = { interfaceName: 'uagv', transport: { brokerUrl }, vdaVersion: '2.0.0' as const };
  const agv = new AgvController(LIB_AGV, client, { agvAdapterType: VirtualAgvAdapter, publishStateInterval: 200, publishVisualizationInterval: 100 }, {
    initialPosition: { mapId: 'local', x: 0, y: 0, theta: 0, lastNodeId: 'n0' },
  });
  const mc = new MasterController(client, {});
  try {
    await agv.start();
    await mc.start();
    let processed = false;
    await mc.assignOrder(LIB_AGV, {
      orderId: 'o1',
      orderUpdateId: 0,
      nodes: [
        { nodeId: 'n0', sequenceId: 0, released: true, nodePosition: { x: 0, y: 0, mapId: 'local' }, actions: [] },
        { nodeId: 'n1', sequenceId: 2, released: true, nodePosition: { x: 0.5, y: 0, mapId: 'local' }, actions: [{ actionId: 'a1', actionType: 'pick', blockingType: BlockingType.Hard, actionParameters: [{ key: 'stationType', value: 'floor' }, { key: 'loadType', value: 'EPAL' }] }] },
      ],
      edges: [{ edgeId: 'e1', sequenceId: 1, startNodeId: 'n0', endNodeId: 'n1', released: true, actions: [] }],
    }, { onOrderProcessed: () => { processed = true; } });
    await until(() => processed, 20_000, 'the virtual AGV to finish its order');
    // VDA 5050 runs on QoS 0: a request (or its answer) can be lost on a loaded machine, so it is asked
    // again until the factsheet is there.
    const hasFactsheet = (): boolean => captured.some((m) => m.topic.endsWith('/factsheet'));
    for (let attempt = 1; !hasFactsheet(); attempt++) {
      await mc.initiateInstantActions(LIB_AGV, { instantActions: [{ actionId: `f${attempt}`, actionType: 'factsheetRequest', blockingType: BlockingType.None }] }, { onActionStateChanged: () => {}, onActionError: () => {} });
      const asked = Date.now();
      await until(() => hasFactsheet() || Date.now() - asked > 5_000, 10_000, 'an answer to the factsheet request');
      if (attempt >= 6 && !hasFactsheet()) throw new Error('no factsheet from the virtual AGV after 6 requests');
    }
  } finally {
    await mc.stop().catch(() => {});
    await agv.stop().catch(() => {});
    await sub.endAsync();
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return captured;
}
