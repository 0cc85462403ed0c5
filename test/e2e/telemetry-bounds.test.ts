/**
 * Robot strings have a byte bound from ingest to export, through the real `fleetgw serve` (embedded
 * chdb) and robots on the robot link (the project's agent and its sample encoder):
 * - a robot sending megabyte strings has them cut to the field table's bounds in what is stored, its
 *   robot view and its history, counted by reason in /metrics, with one warning for the robot that
 *   carries neither its strings nor its token (docs/robot-link.md, "Bounds on telemetry strings");
 * - a robot whose every string sits at its bound (the worst case the bounds allow) gets raw pages cut
 *   by their byte budget with a cursor that continues without loss, and an MCAP export streamed
 *   (chunked, no length) that stops at its byte cap and says so in its `fleetgw.export.result`
 *   metadata, from where a second export continues (docs/telemetry-history.md, Limits);
 * - five such exports at once leave the gateway's memory within a loose bound and a stop sent
 *   meanwhile is acknowledged (its timing is measured in bench/telemetry-history.mjs).
 */
import { McapIndexedReader, type TypedMcapRecords } from '@mcap/core';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

const GIANT = 40;
const WORST = 1500;
/** The export's message cap, set low (FLEETGW_HISTORY_EXPORT_MAX_BYTES) so a few worst-case samples reach it, and the page budget. */
const EXPORT_CAP = 2 * 1024 * 1024;
const PAGE_BUDGET = 4 * 1024 * 1024;
/** The two robots (test/support/bounds-robots.mjs): giant strings, and every string at its bound. */
const ROBOTS_SCRIPT = fileURLToPath(new URL('../support/bounds-robots.mjs', import.meta.url));

/** One series of a scrape, or 0. */
function metric(text: string, series: string): number {
  for (const line of text.split('\n')) if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  return 0;
}

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

async function mcapOf(bytes: Uint8Array): Promise<{ telemetry: number; result: Map<string, string> }> {
  const reader = await McapIndexedReader.Initialize({
    readable: { size: () => Promise.resolve(BigInt(bytes.byteLength)), read: (o, n) => Promise.resolve(bytes.subarray(Number(o), Number(o + n))) },
  });
  const topics = new Map([...reader.channelsById.values()].map((c) => [c.id, c.topic]));
  let telemetry = 0;
  for await (const m of reader.readMessages()) if (topics.get(m.channelId) === '/telemetry') telemetry++;
  const results: TypedMcapRecords['Metadata'][] = [];
  for await (const md of reader.readMetadata({ name: 'fleetgw.export.result' })) results.push(md);
  expect(results).toHaveLength(1);
  return { telemetry, result: results[0]!.metadata };
}

describe('robot strings are bounded from ingest to export (fleetgw serve, chdb)', () => {
  const d = makeDataDir();
  const big = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'giant']);
  const full = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'worst']);
  const tg = Math.floor((Date.now() - 1_800_000) / 1000) * 1000;
  const tw = tg + 60_000;
  const worstRange = `from_ms=${tw}&to_ms=${tw + WORST * 10}`;
  let gw: RunningGateway;
  let token: string;
  let robots: ChildProcess | undefined;
  let sent = false;
  let stops = 0;
  const get = (path: string) => api(gw.ready.http, d.apiKey, path);

  beforeAll(async () => {
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http'], { FLEETGW_HISTORY_EXPORT_MAX_BYTES: String(EXPORT_CAP) });
    token = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    // The robots run in a process of their own (the built agent, as a robot would): a test process
    // holding both ends of a 100 MB stream grew by gigabytes under vitest.
    robots = spawn(process.execPath, [ROBOTS_SCRIPT, JSON.stringify({ grpc: gw.ready.grpc, big, full, tg, tw, giant: GIANT, worst: WORST })], { stdio: ['ignore', 'pipe', 'inherit'] });
    createInterface({ input: robots.stdout! }).on('line', (line) => {
      if (line === 'sent') sent = true;
      if (line === 'command') stops++;
    });
    await until(() => sent, 60_000, 'robots sent their samples');
    const count = async (robotId: string, from: number, to: number): Promise<number> =>
      (await get(`/v1/robots/${robotId}/telemetry/series?from_ms=${from}&to_ms=${to}&max_points=1`)).body.points?.[0]?.count ?? 0;
    await until(async () => (await count(big.robotId!, tg, tg + 60_000)) === GIANT, 120_000, 'giant samples stored');
    await until(async () => (await count(full.robotId!, tw, tw + WORST * 10)) === WORST, 120_000, 'worst-case samples stored');
  }, 300_000);

  afterAll(async () => {
    robots?.kill();
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('cuts over-long strings at ingest, counts them by reason and warns once for the robot, without its strings', async () => {
    const view = (await get(`/v1/robots/${big.robotId}`)).body;
    expect(view.mode).toBe('M'.repeat(64));
    const page = await get(`/v1/robots/${big.robotId}/telemetry?from_ms=${tg}&to_ms=${tg + 60_000}&limit=100`);
    expect(page.status).toBe(200);
    expect(page.body.items).toHaveLength(GIANT);
    for (const s of page.body.items) {
      expect(s.mode).toBe('M'.repeat(64));
      expect(s.missionRunId).toBe('R'.repeat(64));
      expect(s.missionState).toBe('S'.repeat(64));
      expect(s.faults).toEqual(Array.from({ length: 64 }, (_x, k) => `${k}`.padEnd(64, 'F')));
    }
    const scrape = await (await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    const bounded = (reason: string): number => metric(scrape, `fleetgw_telemetry_values_bounded_total{reason="${reason}"}`);
    expect(bounded('mode_too_long')).toBe(GIANT);
    expect(bounded('mission_run_id_too_long')).toBe(GIANT);
    expect(bounded('mission_state_too_long')).toBe(GIANT);
    expect(bounded('faults_too_long')).toBe(GIANT * 64);
    expect(bounded('faults_too_many')).toBe(GIANT * 36);
    const lines = gw.stderr().split('\n').filter((l) => l.includes('telemetry strings over their bound'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ robotId: big.robotId, bounded: { mode_too_long: expect.any(Number) }, limits: { mode_too_long: 64 } });
    expect(gw.stderr()).not.toContain('M'.repeat(65));
    expect(gw.stderr()).not.toContain('F'.repeat(65));
    expect(gw.stderr()).not.toContain(big.robotToken);
  });

  it('stops a raw page at its byte budget with a cursor that continues without loss', async () => {
    const ts: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await fetch(`${gw.ready.http}/v1/robots/${full.robotId}/telemetry?${worstRange}&limit=10000${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${d.apiKey}` } });
      expect(res.status).toBe(200);
      const text = await res.text();
      // The budget is estimated from the values: within a few percent of the JSON sent.
      expect(text.length).toBeLessThan(PAGE_BUDGET * 1.1);
      const body = JSON.parse(text) as { items: { tsMs: number }[]; next_cursor: string | null };
      if (pages === 0) {
        expect(body.items.length).toBeLessThan(WORST);
        expect(body.next_cursor).not.toBeNull();
      }
      ts.push(...body.items.map((s) => s.tsMs));
      cursor = body.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBeGreaterThan(1);
    expect(ts).toEqual(Array.from({ length: WORST }, (_x, i) => tw + i * 10));
  });

  it('streams an MCAP export that stops at its byte cap, says where to continue, and continues there', async () => {
    const first = await fetch(`${gw.ready.http}/v1/robots/${full.robotId}/telemetry/export.mcap?${worstRange}`, { headers: { authorization: `Bearer ${d.apiKey}` } });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-length')).toBeNull();
    expect(first.headers.get('transfer-encoding')).toBe('chunked');
    const a = new Uint8Array(await first.arrayBuffer());
    expect(a.byteLength).toBeGreaterThan(EXPORT_CAP * 0.9);
    expect(a.byteLength).toBeLessThan(EXPORT_CAP + 512 * 1024);
    const one = await mcapOf(a);
    expect(one.result.get('complete')).toBe('false');
    expect(Number(one.result.get('samples'))).toBe(one.telemetry);
    const next = Number(one.result.get('next_from_ms'));
    expect(next).toBe(tw + one.telemetry * 10);
    // Each export from the previous one's next_from_ms continues it, until one is complete.
    let total = one.telemetry;
    let from = next;
    for (let k = 0; k < 20; k++) {
      const res = await fetch(`${gw.ready.http}/v1/robots/${full.robotId}/telemetry/export.mcap?from_ms=${from}&to_ms=${tw + WORST * 10}`, { headers: { authorization: `Bearer ${d.apiKey}` } });
      const part = await mcapOf(new Uint8Array(await res.arrayBuffer()));
      total += part.telemetry;
      if (part.result.get('complete') === 'true') break;
      from = Number(part.result.get('next_from_ms'));
      expect(from).toBe(tw + total * 10);
    }
    expect(total).toBe(WORST);
  });

  it('four worst-case exports at once (the default limit) keep memory bounded, and a stop sent meanwhile is acknowledged', async () => {
    const pid = gw.proc.pid!;
    const before = rssBytes(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 50);
    try {
      const exports = Array.from({ length: 4 }, async () => {
        const res = await fetch(`${gw.ready.http}/v1/robots/${full.robotId}/telemetry/export.mcap?${worstRange}`, { headers: { authorization: `Bearer ${d.apiKey}` } });
        return (await res.arrayBuffer()).byteLength;
      });
      const stopsBefore = stops;
      const stop = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
        method: 'POST',
        body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: big.robotId, wait_for_ack: true }),
      });
      expect(stop.status).toBe(200);
      expect(stop.body.outcomes[0].delivery.state).toBe('agent_received');
      expect(stops).toBe(stopsBefore + 1);
      for (const n of await Promise.all(exports)) expect(n).toBeGreaterThan(EXPORT_CAP * 0.9);
    } finally {
      clearInterval(sampler);
    }
    // Loose (the exports here are small: the cap is low): each streamed export holds a read chunk and
    // an MCAP chunk. bench/telemetry-history.mjs measures full-size worst-case exports.
    expect(peak - before).toBeLessThan(512 * 1024 * 1024);
  }, 120_000);
});
