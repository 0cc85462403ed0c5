// GatewayMetrics without sockets: label bounds, running totals read at scrape time, readiness gauge.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { GatewayMetrics, type ScrapeSources } from '../../src/metrics/gateway-metrics.js';

function sources(over: Partial<ScrapeSources> = {}): { s: ScrapeSources; t: ReturnType<ScrapeSources['telemetry']> } {
  const t = { framesIn: 0, bytesIn: 0, samplesIn: 0, rowsWritten: 0, rowsSpooled: 0, rowsReplayed: 0, spoolBytes: 0, spoolBacklog: 0, spoolFullWaits: 0, duplicateBatches: 0, corruptFrames: 0, boundedValues: [] as number[], framesLost: 0, framesRejected: 0, batches: 0, batchesInline: 0, queueBytes: 0, insertsInFlight: 0, paused: false };
  return {
    t,
    s: {
      telemetry: () => ({ ...t }),
      boundReasons: [],
      robotsOnline: () => 3,
      commandsPending: () => 2,
      stream: () => ({ sockets: 1, droppedSamples: 7 }),
      schedulesArmed: () => 4,
      readiness: () => ({ store: false, lmdb: true }),
      alertsUnresolved: () => 5,
      ...over,
    },
  };
}

const line = (text: string, series: string): string | undefined => text.split('\n').find((l) => l.startsWith(`${series} `));

describe('GatewayMetrics', () => {
  it('labels requests by route template, folds unknown methods and unmatched paths', async () => {
    const m = new GatewayMetrics(sources().s);
    m.httpRequest({ method: 'GET', route: '/v1/robots/{robot_id}', status: 200, durationMs: 3 });
    m.httpRequest({ method: 'GET', route: '/v1/robots/{robot_id}', status: 200, durationMs: 5 });
    m.httpRequest({ method: 'BREW', route: null, status: 404, durationMs: 1 });
    const text = await m.render();
    expect(line(text, 'fleetgw_http_requests_total{method="GET",route="/v1/robots/{robot_id}",status="200"}')).toMatch(/ 2$/);
    expect(line(text, 'fleetgw_http_requests_total{method="other",route="unmatched",status="404"}')).toMatch(/ 1$/);
    expect(line(text, 'fleetgw_http_request_duration_seconds_sum{method="GET",route="/v1/robots/{robot_id}"}')).toMatch(/ 0\.008$/);
    expect(text).not.toContain('BREW');
  });

  it('brings running totals up to date at each scrape, and never lets a counter go down', async () => {
    const { s, t } = sources();
    const m = new GatewayMetrics(s);
    t.samplesIn = 500;
    t.rowsWritten = 400;
    t.corruptFrames = 2;
    t.batches = 3;
    t.batchesInline = 40;
    const first = await m.render();
    expect(line(first, 'fleetgw_telemetry_samples_received_total')).toMatch(/ 500$/);
    expect(line(first, 'fleetgw_telemetry_samples_stored_total')).toMatch(/ 400$/);
    expect(line(first, 'fleetgw_telemetry_frames_dropped_total{reason="corrupt"}')).toMatch(/ 2$/);
    expect(line(first, 'fleetgw_telemetry_decode_batches_total{thread="pool"}')).toMatch(/ 3$/);
    expect(line(first, 'fleetgw_telemetry_decode_batches_total{thread="main"}')).toMatch(/ 40$/);
    // Time-based on purpose: past the per-scrape read cache's lifetime, the next render reads anew.
    await new Promise((r) => setTimeout(r, 120));
    t.samplesIn = 900;
    const second = await m.render();
    expect(line(second, 'fleetgw_telemetry_samples_received_total')).toMatch(/ 900$/);
    expect(line(second, 'fleetgw_robots_online')).toMatch(/ 3$/);
    expect(line(second, 'fleetgw_alerts_unresolved')).toMatch(/ 5$/);
    expect(line(second, 'fleetgw_commands_pending')).toMatch(/ 2$/);
    expect(line(second, 'fleetgw_stream_samples_dropped_total')).toMatch(/ 7$/);
    expect(line(second, 'fleetgw_ready{check="store"}')).toMatch(/ 0$/);
    expect(line(second, 'fleetgw_ready{check="lmdb"}')).toMatch(/ 1$/);
  });

  it('records commands, acks, inserts, backpressure and scheduler lateness', async () => {
    const m = new GatewayMetrics(sources().s);
    m.commandState('stop', 'dispatched');
    m.commandState('stop', 'agent_received');
    m.commandAcked('received', 40);
    m.insertDone(true, 12);
    m.insertDone(false, 30_000);
    m.backpressure(true);
    m.backpressure(false);
    m.schedulerLateness('fired', 15);
    m.schedulerLateness('skipped', -3);
    const text = await m.render();
    expect(line(text, 'fleetgw_commands_total{action="stop",state="agent_received"}')).toMatch(/ 1$/);
    expect(line(text, 'fleetgw_command_ack_seconds_sum{outcome="received"}')).toMatch(/ 0\.04$/);
    expect(line(text, 'fleetgw_telemetry_inserts_total{outcome="error"}')).toMatch(/ 1$/);
    expect(line(text, 'fleetgw_telemetry_insert_duration_seconds_bucket{le="30",outcome="error"}')).toMatch(/ 1$/);
    expect(line(text, 'fleetgw_telemetry_backpressure_pauses_total')).toMatch(/ 1$/);
    expect(line(text, 'fleetgw_scheduler_lateness_seconds_sum{outcome="skipped"}')).toMatch(/ 0$/);
  });

  it('publishes every labelled series with known label values at 0 from the start, and the certificate expiry', async () => {
    const m = new GatewayMetrics(sources({ boundReasons: ['mode_too_long'], commandActions: ['stop', 'start'], certificateExpirySeconds: 1_900_000_000 }).s);
    const text = await m.render();
    for (const reason of ['corrupt', 'worker_crash', 'shutting_down']) expect(line(text, `fleetgw_telemetry_frames_dropped_total{reason="${reason}"}`), reason).toMatch(/ 0$/);
    expect(line(text, 'fleetgw_telemetry_values_bounded_total{reason="mode_too_long"}')).toMatch(/ 0$/);
    expect(line(text, 'fleetgw_telemetry_decode_batches_total{thread="main"}')).toMatch(/ 0$/);
    for (const action of ['stop', 'start']) {
      for (const state of ['deferred', 'dispatched', 'agent_received', 'agent_rejected']) expect(line(text, `fleetgw_commands_total{action="${action}",state="${state}"}`)).toMatch(/ 0$/);
    }
    for (const outcome of ['received', 'rejected']) expect(line(text, `fleetgw_command_ack_seconds_count{outcome="${outcome}"}`)).toMatch(/ 0$/);
    for (const outcome of ['ok', 'error']) expect(line(text, `fleetgw_telemetry_inserts_total{outcome="${outcome}"}`)).toMatch(/ 0$/);
    for (const outcome of ['fired', 'skipped']) expect(line(text, `fleetgw_scheduler_lateness_seconds_count{outcome="${outcome}"}`)).toMatch(/ 0$/);
    expect(line(text, 'fleetgw_tls_certificate_expiry_timestamp_seconds')).toMatch(/ 1900000000$/);
    // Counting on from 0: the first event is an increase of 1.
    m.commandState('stop', 'dispatched');
    m.commandAcked('received', 40);
    const after = await m.render();
    expect(line(after, 'fleetgw_commands_total{action="stop",state="dispatched"}')).toMatch(/ 1$/);
    expect(line(after, 'fleetgw_command_ack_seconds_count{outcome="received"}')).toMatch(/ 1$/);
    // One series per label set: the zeroed one is the one that counts on.
    const series = after.split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.slice(0, l.lastIndexOf(' ')));
    expect(series.length).toBe(new Set(series).size);
  });

  it('keeps each gateway in its own registry (no global state)', async () => {
    const a = new GatewayMetrics(sources().s);
    const b = new GatewayMetrics(sources().s);
    a.commandState('stop', 'deferred');
    expect(await b.render()).not.toContain('state="deferred"');
    expect(await a.render()).toContain('fleetgw_commands_total{action="stop",state="deferred"} 1');
    expect(a.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('folds requests at scrape time into the same exposition prom-client writes from observe()', async () => {
    // The reference: prom-client's own counter and histogram fed one call per request, as the
    // gateway's metrics were written before they gathered counts between scrapes.
    const ref = new Registry();
    const reqs = new Counter({ name: 'fleetgw_http_requests_total', help: 'REST requests answered, by method, route template and status.', labelNames: ['method', 'route', 'status'], registers: [ref] });
    const dur = new Histogram({ name: 'fleetgw_http_request_duration_seconds', help: 'Time from routing a REST request to its answer (body already read), by method and route template.', labelNames: ['method', 'route'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [ref] });
    const m = new GatewayMetrics(sources().s);
    const routes = ['/v1/robots/{robot_id}', '/v1/me', null];
    const family = (text: string, name: string): string => text.split('\n').filter((l) => l.startsWith(name) || l.includes(` ${name} `)).join('\n');
    const durations = [0, 1, 1024, 2560, 5120, 2047, 51_200, 40_000_000];
    for (let scrape = 0; scrape < 3; scrape++) {
      for (let i = 0; i < 200; i++) {
        const method = i % 7 === 0 ? 'POST' : 'GET';
        const route = routes[i % routes.length]!;
        const status = i % 11 === 0 ? 404 : 200;
        const durationMs = durations[(i + scrape) % durations.length]! / 1024;
        m.httpRequest({ method, route, status, durationMs });
        reqs.inc({ method, route: route ?? 'unmatched', status: String(status) });
        dur.observe({ method, route: route ?? 'unmatched' }, durationMs / 1000);
      }
      const got = await m.render();
      const want = await ref.metrics();
      for (const name of ['fleetgw_http_requests_total', 'fleetgw_http_request_duration_seconds']) {
        // Every line the same, but a sum's last digits: the fold adds the same values in another order.
        const g = family(got, name).split('\n');
        const w = family(want, name).split('\n');
        expect(g.map((l) => l.replace(/_sum(\{.*\}) .*$/, '_sum$1'))).toEqual(w.map((l) => l.replace(/_sum(\{.*\}) .*$/, '_sum$1')));
        for (let i = 0; i < g.length; i++) {
          if (!g[i]!.includes('_sum{')) continue;
          const a = Number(g[i]!.split(' ').pop());
          const b = Number(w[i]!.split(' ').pop());
          expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(b)));
        }
      }
    }
  });
});
