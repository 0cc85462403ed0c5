/**
 * The VDA 5050 broker's series in the gateway's registry (docs/operations.md, "The series"):
 * `fleetgw_vda5050_denied_total{reason}` counts what the embedded broker refused. Denials are rare
 * events, so prom-client's own `inc` is cheap enough here (no scrape-time folding).
 * `fleetgw_vda5050_broker_routing_queue_max` is the most publishes the broker ever held waiting to be
 * routed; it is noted on every robot publish, so it is a plain number read at scrape time.
 */
import { Counter, Gauge } from 'prom-client';
import type { GatewayMetrics } from './gateway-metrics.js';

/** Registers the series, each reason from zero, and returns the recorder. */
export function vda5050BrokerMetrics(metrics: GatewayMetrics, reasons: readonly string[]): { denied(reason: string): void; routingQueue(length: number): void } {
  const denied = new Counter({
    name: 'fleetgw_vda5050_denied_total',
    help: 'What the embedded VDA 5050 broker refused, by reason: auth (login), will, publish, subscribe, packet_size, connections.',
    labelNames: ['reason'],
    registers: [metrics.registry],
  });
  for (const r of reasons) denied.inc({ reason: r }, 0);
  let routingQueueMax = 0;
  new Gauge({
    name: 'fleetgw_vda5050_broker_routing_queue_max',
    help: 'Most publishes the embedded VDA 5050 broker held waiting to be routed at once since start; 0 while it routes each publish as it is read.',
    registers: [metrics.registry],
    collect() {
      this.set(routingQueueMax);
    },
  });
  return {
    denied: (reason) => denied.inc({ reason }),
    routingQueue: (length) => {
      if (length > routingQueueMax) routingQueueMax = length;
    },
  };
}
