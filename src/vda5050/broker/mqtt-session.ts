/**
 * Master control's session on an external broker (`--vda5050-mqtt-url`, e.g. Debian's mosquitto):
 * an MQTT 3.1.1 client (npm `mqtt`) that reconnects by itself and pushes back through its socket.
 */
import mqtt, { type MqttClient } from 'mqtt';
import type { MasterSession, MasterSessionEvents, Vda5050Broker, Vda5050BrokerConnection } from '../contracts.js';

/** How soon master control tries the broker again after losing it. */
export const RECONNECT_MS = 1_000;

/** The broker at `connection`, reached by master control over MQTT. */
export function externalBroker(connection: Vda5050BrokerConnection): Vda5050Broker {
  return Object.freeze({
    interfaceName: connection.interfaceName,
    version: connection.version,
    url: connection.url,
    openMasterSession: (clientId: string) => new MqttMasterSession(connection, clientId),
  });
}

class MqttMasterSession implements MasterSession {
  private client: MqttClient | null = null;

  constructor(
    private readonly connection: Vda5050BrokerConnection,
    private readonly clientId: string,
  ) {}

  /** An external broker does not tell robots' session ends: master control's silence check finds a robot gone. */
  readonly tellsRobotSessions = false;

  /** Nothing is dropped here: a full socket pushes back (`publish` returns false) instead. */
  get droppedCount(): number {
    return 0;
  }

  /** An external broker does not tell master control about robots' sessions (`robotDisconnected` is never called). */
  start(events: MasterSessionEvents): void {
    const b = this.connection;
    const client = mqtt.connect(b.url, {
      username: b.username,
      password: b.password,
      ...(b.ca !== undefined ? { ca: b.ca } : {}),
      clientId: this.clientId,
      clean: true,
      // Subscriptions are made on every connect (by master control), not replayed by the client.
      resubscribe: false,
      // QoS 0 messages are not queued while disconnected: robots are offline then, and what they did
      // not get is resent from the outbox when they are back.
      queueQoSZero: false,
      reconnectPeriod: RECONNECT_MS,
      connectTimeout: 10_000,
      protocolVersion: 4,
    });
    this.client = client;
    client.on('message', (topic, payload) => events.message(topic, payload));
    client.on('connect', () => {
      // Stops are single small packets: Nagle's algorithm would hold one behind an unacknowledged write.
      (client.stream as { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
      client.stream.on('drain', () => events.drain());
      events.connect();
      // A reconnect may follow a full socket: the new one takes writes.
      events.drain();
    });
    client.on('close', () => events.close());
    client.on('error', (err) => events.error(err));
  }

  subscribe(filters: readonly string[], done: (err: Error | null) => void): void {
    if (this.client === null) {
      done(new Error('the session is not started'));
      return;
    }
    this.client.subscribe([...filters], { qos: 0 }, (err) => done(err ?? null));
  }

  publish(topic: string, payload: Buffer): boolean {
    const client = this.client;
    if (client === null) return true;
    client.publish(topic, payload, { qos: 0 });
    // The socket's answer: false asks for a drain.
    const stream = client.stream as { writableNeedDrain?: boolean } | undefined;
    return stream?.writableNeedDrain !== true;
  }

  async close(): Promise<void> {
    const client = this.client;
    if (client === null) return;
    client.removeAllListeners('message');
    client.removeAllListeners('connect');
    client.removeAllListeners('close');
    // Errors during the end are of no interest any more, but must have a listener.
    client.removeAllListeners('error');
    client.on('error', () => {});
    await client.endAsync(false).catch(() => undefined);
  }
}
