/** VDA 5050 master control (src/vda5050/link): robots over MQTT join the gateway's robot link set. */
import { create } from '@bufbuild/protobuf';
import { missionStart } from '../../commands/catalog/mission-start.js';
import { MissionStartSchema } from '../../gen/fleetgw/v1/robot_link_pb.js';
import { vda5050LinkMetrics } from '../../metrics/vda5050-link-metrics.js';
import { createInboundGate } from '../../vda5050/inbound/index.js';
import { MapFrame } from '../../vda5050/link/map-frame.js';
import { Vda5050Link } from '../../vda5050/link/link.js';
import { LmdbStopMarks, STOP_MARKS_META_PREFIX } from '../../vda5050/link/stop-marks.js';
import type { GatewayContext } from '../parts.js';
import { noRoutes, type GatewayPlugin } from '../plugin.js';

/**
 * Connects master control to the broker the `vda5050-broker` plugin provides and adds it to the
 * link set, so commands, missions, alerts, faults and the telemetry ingest hear VDA 5050 robots like
 * any other, from the moment the first robot has a VDA 5050 identity. Off (nothing started) when
 * that plugin provides no broker. A mission order a robot runs that master control did not send since
 * it started (a gateway restart) is rebuilt from its run's MissionStart, which the missions module
 * reads back.
 */
export function vda5050Plugin(ctx: GatewayContext): GatewayPlugin {
  let link: Vda5050Link | null = null;
  let stopWaiting = (): void => {};
  return {
    name: 'vda5050',
    dependsOn: ['vda5050-broker', 'robotlink', 'metrics', 'missions'],
    // Each robot's stop mark (src/vda5050/link/stop-marks.ts).
    storage: { databases: [], prefixes: { meta: [STOP_MARKS_META_PREFIX] } },
    routes: noRoutes,
    start: () => {
      const { parts } = ctx;
      const broker = parts.get('vda5050Broker');
      if (broker === null) return Promise.resolve();
      const log = ctx.logFor('vda5050');
      // Every robot message passes the gate first; the metrics read its counts.
      const gate = parts.provide('vda5050Inbound', createInboundGate({ version: broker.version, log }));
      const identities = parts.get('vda5050Identities');
      const missions = parts.get('missions');
      const missionStartOf = (robotId: string, runId: string) => {
        const args = missions.startArgsOf(robotId, runId);
        // On the wire as the command service sends it (src/commands/wire.ts).
        return args === undefined ? null : create(MissionStartSchema, missionStart.wire.toWire(args));
      };
      // From 0 before master control starts (it waits for the first bound robot).
      vda5050LinkMetrics(parts.get('metrics'), () => link?.stats() ?? null);
      const begin = (): void => {
        if (link !== null || identities.all().length === 0) return;
        stopWaiting();
        const stopMarks = new LmdbStopMarks(parts.get('store'), (err, robotId) => log.error({ err, robotId }, 'VDA 5050: a robot\'s stop mark could not be stored'));
        link = Vda5050Link.start({ broker, gate, identities, frame: new MapFrame(ctx.opts.vda5050MapOrigin), missionStartOf, stopMarks, log });
        parts.get('link').add(link);
      };
      // Master control connects once a robot is bound: before that it has nobody to serve, and an
      // embedded broker in auto mode does not listen yet (a client would only retry against a closed port).
      stopWaiting = identities.onChange(begin);
      begin();
      return Promise.resolve();
    },
    // Robots stop being served before the parts that serve them stop.
    quiesce: async () => {
      stopWaiting();
      await link?.close();
    },
    stop: async () => {
      await link?.close();
    },
  };
}
