/** VDA 5050 robot identities and the MQTT broker robots and master control meet on (src/vda5050). */
import { vda5050BrokerMetrics } from '../../metrics/vda5050-broker-metrics.js';
import { DENIAL_REASONS, EmbeddedBroker } from '../../vda5050/broker/embedded.js';
import { externalBroker } from '../../vda5050/broker/mqtt-session.js';
import { DEFAULT_VDA5050_SETTINGS } from '../../vda5050/broker/settings.js';
import { RegistryVda5050Identities } from '../../vda5050/identity/identities.js';
import type { GatewayContext } from '../parts.js';
import { NO_STORAGE, noRoutes, type GatewayPlugin } from '../plugin.js';

/**
 * Provides `vda5050Identities` always, and `vda5050Broker`: null with `--vda5050 off`; an external
 * broker (master control's session is an MQTT client with the login of `--vda5050-mqtt-url`); else
 * the embedded broker (the session is attached inside it). In `auto` mode the embedded broker
 * listens from start when a robot has a VDA 5050 identity, otherwise from the moment one gets one
 * (REST or `fleetgw admin`, seen within the identity poll); master control opens its session once
 * `vda5050Identities.all()` is non-empty or `onChange` fires.
 */
export function vda5050BrokerPlugin(ctx: GatewayContext): GatewayPlugin {
  let identities: RegistryVda5050Identities | null = null;
  let broker: EmbeddedBroker | null = null;
  let stopWaiting = (): void => {};
  return {
    name: 'vda5050-broker',
    dependsOn: ['registry', 'metrics'],
    storage: NO_STORAGE,
    routes: noRoutes,
    start: async () => {
      const { parts, opts, tunables: t } = ctx;
      const log = ctx.logFor('vda5050-broker');
      const settings = opts.vda5050 ?? DEFAULT_VDA5050_SETTINGS;
      identities = new RegistryVda5050Identities(parts.get('store'), log);
      identities.start();
      parts.provide('vda5050Identities', identities);
      if (settings.mode === 'off') {
        parts.provide('vda5050Broker', null);
        return;
      }
      const { external, interfaceName, version } = settings;
      if (external !== null) {
        parts.provide('vda5050Broker', externalBroker({
          url: external.url,
          username: external.username ?? '',
          password: external.password ?? '',
          ...(external.ca !== undefined ? { ca: external.ca } : {}),
          interfaceName,
          version,
        }));
        log.info({ url: external.url, interfaceName, version }, 'VDA 5050 uses an external broker');
        return;
      }
      const metrics = vda5050BrokerMetrics(parts.get('metrics'), DENIAL_REASONS);
      const embedded = new EmbeddedBroker({
        store: parts.get('store'),
        identities,
        host: opts.host,
        port: settings.port,
        // The robot link's rule: TLS with the gateway's certificate unless the host is loopback.
        tls: ctx.tls.grpc,
        interfaceName,
        version,
        maxConnections: t.vda5050MaxConnections,
        maxPacketBytes: t.vda5050MaxPacketBytes,
        observer: metrics,
        log,
      });
      broker = embedded;
      parts.provide('vda5050Broker', embedded.forMasterControl);
      if (settings.mode === 'on' || identities.all().length > 0) {
        await embedded.listen();
        return;
      }
      log.info({ port: settings.port }, 'VDA 5050 broker idle: no robot has a VDA 5050 identity yet');
      const ids = identities;
      // Every change until the broker listens: a start that failed (port taken) is tried again.
      stopWaiting = ids.onChange(() => {
        if (embedded.isListening || ids.all().length === 0) return;
        embedded.listen().catch((err: unknown) => log.error({ err }, `VDA 5050 broker did not start: ${err instanceof Error ? err.message : String(err)}`));
      });
    },
    quiesce: async () => {
      stopWaiting();
      await broker?.stopAccepting();
    },
    stop: async () => {
      await broker?.close();
      identities?.stop();
    },
  };
}
