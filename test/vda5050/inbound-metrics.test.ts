/** The inbound gate's counts in the gateway's registry: every reason from zero, totals at scrape time. */
import { expect, test } from 'vitest';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics.js';
import { createInboundGate, REJECT_REASONS } from '../../src/vda5050/inbound/index.js';
import { VALID } from './inbound-corpus.js';

const line = (text: string, series: string): string | undefined => text.split('\n').find((l) => l.startsWith(`${series} `));

test('fleetgw_vda5050_messages_rejected_total publishes every reason from 0 and counts the gate\'s refusals', async () => {
  const gate = createInboundGate({ version: '2.0.0', log: { warn: () => {} } });
  const telemetry = { framesIn: 0, bytesIn: 0, samplesIn: 0, rowsWritten: 0, rowsSpooled: 0, rowsReplayed: 0, spoolBytes: 0, spoolBacklog: 0, spoolFullWaits: 0, duplicateBatches: 0, corruptFrames: 0, boundedValues: [], framesLost: 0, framesRejected: 0, batches: 0, batchesInline: 0, queueBytes: 0, insertsInFlight: 0, paused: false };
  const metrics = (): GatewayMetrics => new GatewayMetrics({
    telemetry: () => telemetry,
    boundReasons: [],
    robotsOnline: () => 0,
    commandsPending: () => 0,
    stream: () => ({ sockets: 0, droppedSamples: 0 }),
    schedulesArmed: () => 0,
    readiness: () => ({}),
    vda5050Inbound: { reasons: REJECT_REASONS, read: () => gate.stats() },
  });
  const first = await metrics().render();
  for (const reason of REJECT_REASONS) expect(line(first, `fleetgw_vda5050_messages_rejected_total{reason="${reason}"}`), reason).toMatch(/ 0$/);
  expect(line(first, 'fleetgw_vda5050_messages_accepted_total')).toMatch(/ 0$/);
  expect(line(first, 'fleetgw_vda5050_header_resets_total')).toMatch(/ 0$/);

  const robot = { robotId: 'r', fleetId: 'f', binding: { manufacturer: 'Acme', serialNumber: 'sn-1' } };
  gate.accept(robot, 'state', Buffer.from(JSON.stringify(VALID.state[0])));
  gate.accept(robot, 'state', Buffer.from(JSON.stringify(VALID.state[0])));
  gate.accept(robot, 'state', Buffer.from('{'));
  gate.accept(robot, 'state', Buffer.from(JSON.stringify({ ...VALID.state[0], headerId: 99, version: '3.0.0' })));
  // A fresh registry: the first one caches what it read for the rest of its scrape.
  const second = await metrics().render();
  expect(line(second, 'fleetgw_vda5050_messages_accepted_total')).toMatch(/ 1$/);
  expect(line(second, 'fleetgw_vda5050_messages_rejected_total{reason="out_of_order"}')).toMatch(/ 1$/);
  expect(line(second, 'fleetgw_vda5050_messages_rejected_total{reason="not_json"}')).toMatch(/ 1$/);
  expect(line(second, 'fleetgw_vda5050_messages_rejected_total{reason="wrong_version"}')).toMatch(/ 1$/);
  expect(line(second, 'fleetgw_vda5050_messages_rejected_total{reason="schema"}')).toMatch(/ 0$/);
});
