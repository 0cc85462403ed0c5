/**
 * The embedded broker's connection stream (PacketLimitedStream) hands each MQTT packet aedes writes
 * to the socket in one write: mqtt-packet writes a publish as five pieces, and with TCP_NODELAY on
 * each piece written on its own would leave as its own segment, every one after the previous write's
 * callback (the robot's stop arriving in pieces).
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PacketLimitedStream } from '../../src/vda5050/broker/packet-limit.js';
import { until } from '../support/until.js';

describe('PacketLimitedStream writes', () => {
  let aedes: Aedes;
  let server: Server;
  let url = '';
  /** Sizes of the writes to each server-side socket, by the client's port. */
  const writes = new Map<number, number[]>();

  beforeAll(async () => {
    aedes = await Aedes.createBroker();
    server = createServer((socket: Socket) => {
      socket.setNoDelay(true);
      const log: number[] = [];
      writes.set(socket.remotePort!, log);
      const write = socket.write.bind(socket) as (chunk: Uint8Array, cb?: (err?: Error | null) => void) => boolean;
      socket.write = ((chunk: Uint8Array, cb?: (err?: Error | null) => void) => {
        log.push(chunk.length);
        return write(chunk, cb);
      }) as typeof socket.write;
      aedes.handle(new PacketLimitedStream(socket, 1 << 20, () => undefined));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => aedes.close(() => server.close(() => resolve())));
  });

  it('forwards a publish to a subscriber as one socket write', async () => {
    const sub = await mqtt.connectAsync(url, { clientId: 'sub', protocolVersion: 4 });
    const pub = await mqtt.connectAsync(url, { clientId: 'pub', protocolVersion: 4 });
    try {
      const got: Buffer[] = [];
      sub.on('message', (_topic, payload) => got.push(payload));
      await sub.subscribeAsync('uagv/v2/Acme/AGV-1/instantActions', { qos: 0 });
      const log = writes.get((sub.stream as Socket).localPort!)!;
      log.length = 0;
      const payload = JSON.stringify({ headerId: 1, instantActions: [{ actionId: 'a-1', actionType: 'startPause', blockingType: 'HARD' }] });
      pub.publish('uagv/v2/Acme/AGV-1/instantActions', payload, { qos: 0 });
      await until(() => got.length === 1, 10_000, 'the publish forwarded');
      expect(got[0]!.toString()).toBe(payload);
      // The whole packet in one write: type byte, remaining length (2 bytes here), topic length, topic, payload.
      expect(log).toEqual([1 + 2 + 2 + 'uagv/v2/Acme/AGV-1/instantActions'.length + payload.length]);
    } finally {
      await sub.endAsync();
      await pub.endAsync();
    }
  });
});
