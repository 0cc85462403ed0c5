/**
 * The VDA 5050 broker's series in the gateway's registry (docs/operations.md, "The series"):
 * `fleetgw_vda5050_denied_total{reason}` counts what the embedded broker refused. Denials are rare
 * events, so prom-client's own `inc` is cheap enough here (no scrape-time folding).
 */
import { Counter } from 'prom-client';
import type { GatewayMetrics } from './gateway-metrics.js';

/** Registers the series, each reason from zero, and returns the recorder. */
export function vda5050BrokerMetrics(metrics: GatewayMetrics, reasons: readonly string[]): { denied(reason: string): void } {
  const denied = new Counter({
    name: 'fleetgw_vda5050_denied_total',
    help: 'What the embedded VDA 5050 broker refused, by reason: auth (login), will, publish, subscribe, packet_size, connections.',
    labelNames: ['reason'],
    registers: [metrics.registry],
  });
  for (const r of reasons) denied.inc({ reason: r }, 0);
  return { denied: (reason) => denied.inc({ reason }) };
}
