/**
 * VDA 5050 master control's own counts in the gateway's registry (docs/operations.md, "The series"):
 * what the link drops or folds after the inbound gate (src/vda5050/link/link.ts, `stats()`). The link
 * counts in plain numbers as messages arrive; the registry reads them only when Prometheus scrapes.
 */
import { Counter } from 'prom-client';
import type { GatewayMetrics } from './gateway-metrics.js';

/** The link's running counts the series read (src/vda5050/link `Vda5050LinkCounts` has them). */
export interface Vda5050LinkCounts {
  coalesced: number;
  unbound: number;
  unmapped: number;
  publishDropped: number;
}

/** Each series: its name, HELP text, and the count it reads. */
const SERIES: ReadonlyArray<readonly [name: string, help: string, read: (s: Vda5050LinkCounts) => number]> = [
  ['fleetgw_vda5050_messages_coalesced_total', 'Unread VDA 5050 state and visualization messages replaced by a newer one of the same robot before master control read them (each is a full snapshot; a robot publishing faster than master control reads).', (s) => s.coalesced],
  ['fleetgw_vda5050_messages_unbound_total', 'VDA 5050 messages on the topics of an identity no robot is bound to, dropped unread (an external broker lets such clients publish).', (s) => s.unbound],
  ['fleetgw_vda5050_messages_unmapped_total', 'VDA 5050 messages that passed the inbound checks but that master control could not map to telemetry, acks or status, dropped (a gap between the schema and the mapping: a bug).', (s) => s.unmapped],
  ['fleetgw_vda5050_publish_dropped_total', 'Messages master control dropped: from a robot\'s full outbound lane (16 urgent, 64 other per robot, oldest first), or beyond 128 per topic in the embedded broker for a robot that is not reading; the command each carried is published again by the next resend.', (s) => s.publishDropped],
];

/**
 * Registers the series, each from 0, reading `stats` at scrape time; `stats` answers null while
 * master control has not started (no robot bound yet), which reads as nothing counted.
 */
export function vda5050LinkMetrics(metrics: GatewayMetrics, stats: () => Vda5050LinkCounts | null): void {
  let snapshot: Vda5050LinkCounts | null = null;
  let at = -1;
  // One stats() per scrape, not one per series.
  const read = (): Vda5050LinkCounts | null => {
    const now = Date.now();
    if (now - at > 100) {
      snapshot = stats();
      at = now;
    }
    return snapshot;
  };
  for (const [name, help, pick] of SERIES) {
    let seen = 0;
    const c: Counter = new Counter({
      name,
      help,
      registers: [metrics.registry],
      collect: () => {
        const s = read();
        const v = s === null ? 0 : pick(s);
        if (v > seen) c.inc(v - seen);
        seen = Math.max(seen, v);
      },
    });
  }
}
