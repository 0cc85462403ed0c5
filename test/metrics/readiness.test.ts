// Readiness and StoreHealth without sockets: what /readyz and the gRPC health service read.
import { describe, expect, it } from 'vitest';
import { Readiness } from '../../src/gateway/readiness.js';
import { StoreHealth } from '../../src/telemetry/store/store-health.js';
import { captureLog } from '../support/capture-log.js';

describe('Readiness', () => {
  it('publishes at start and on each change, logs which check fails, treats a throwing check as failing', () => {
    let store = true;
    const lines: string[] = [];
    const published: boolean[] = [];
    const r = new Readiness({ store: () => store, lmdb: () => { throw new Error('closed'); } }, captureLog(lines), (ok) => published.push(ok));
    expect(r.results()).toEqual({ store: true, lmdb: false });
    expect(r.ready()).toBe(false);
    // The check's error is logged once (checks run per /readyz request), not swallowed.
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^readiness: check lmdb threw \(closed\); it counts as failing \{"level":"error",.*"check":"lmdb"/);
    r.start(60_000);
    expect(published).toEqual([false]);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^readiness: not ready \(failing: lmdb\) \{"level":"warn",.*"failing":\["lmdb"\]\}$/);
    r.stop();
    store = false;
    expect(r.results().store).toBe(false);
    expect(published).toEqual([false, false]);
  });
});

describe('Readiness status', () => {
  it('is degraded while ready with a degrading condition false, not_ready when a check fails', () => {
    let lmdb = true;
    let storeUp = true;
    const r = new Readiness({ lmdb: () => lmdb }, captureLog([]), () => {}, { storeReachable: () => storeUp });
    expect(r.status()).toBe('ready');
    storeUp = false;
    expect(r.status()).toBe('degraded');
    // A degrading condition never makes the gateway not ready (gRPC health, the metric, 503).
    expect(r.ready()).toBe(true);
    expect(r.results()).toEqual({ lmdb: true });
    lmdb = false;
    expect(r.status()).toBe('not_ready');
  });
});

describe('StoreHealth', () => {
  function fakeStore(): { kind: 'clickhouse'; probe: null; answer: 'ok' | 'fail' | 'hang'; queries: number; queryText(): Promise<string> } {
    return {
      kind: 'clickhouse',
      // One server: `SELECT 1` is the probe.
      probe: null,
      answer: 'ok',
      queries: 0,
      queryText() {
        this.queries++;
        if (this.answer === 'ok') return Promise.resolve('1\n');
        if (this.answer === 'fail') return Promise.reject(new Error('ECONNREFUSED'));
        return new Promise<string>(() => {});
      },
    };
  }
  const log = (): { lines: [string, Record<string, unknown>][]; logger: ReturnType<typeof captureLog> } => {
    const raw: string[] = [];
    const lines: [string, Record<string, unknown>][] = [];
    const logger = captureLog(raw);
    // captureLog gives "msg {fields}"; split it back for the assertions below.
    const push = raw.push.bind(raw);
    raw.push = (...items: string[]): number => {
      for (const item of items) {
        const at = item.indexOf(' {');
        const { level: _level, time: _time, pid: _pid, hostname: _host, ...fields } = JSON.parse(item.slice(at + 1)) as Record<string, unknown>;
        lines.push([item.slice(0, at), fields]);
      }
      return push(...items);
    };
    return { lines, logger };
  };

  it('goes down on a failed probe and up on a good probe or insert, logging both with the outage length', async () => {
    const s = fakeStore();
    const l = log();
    const h = new StoreHealth(s, l.logger, { timeoutMs: 50 });
    expect(h.reachable).toBe(true);
    s.answer = 'fail';
    await h.probe();
    expect(h.reachable).toBe(false);
    expect(l.lines[0]).toEqual(['telemetry store unreachable', { store: 'clickhouse', error: 'ECONNREFUSED' }]);
    h.note(true);
    expect(h.reachable).toBe(true);
    expect(l.lines[1]![0]).toBe('telemetry store reachable again');
    expect(l.lines[1]![1].downMs).toEqual(expect.any(Number));
  });

  it('counts a hung store as down after the timeout and sends it one query at a time', async () => {
    const s = fakeStore();
    const h = new StoreHealth(s, log().logger, { timeoutMs: 30 });
    s.answer = 'hang';
    await h.probe();
    expect(h.reachable).toBe(false);
    await h.probe();
    await h.probe();
    expect(s.queries).toBe(1);
  });

  it('skips the periodic probe while a quick successful insert is fresher than the interval, and only then', async () => {
    const s = fakeStore();
    let t = 0;
    const h = new StoreHealth(s, log().logger, { intervalMs: 2_000, timeoutMs: 50, now: () => t });
    await h.tick();
    expect(s.queries).toBe(1);
    h.noteInsert(true, 10);
    t = 1_999;
    await h.tick();
    expect(s.queries).toBe(1);
    t = 2_000;
    await h.tick();
    expect(s.queries).toBe(2);
    // A slow insert (over the probe's timeout) stands in for nothing: the probe runs.
    h.noteInsert(true, 51);
    await h.tick();
    expect(s.queries).toBe(3);
    // Nor does a failed one, even right after a quick success: the probe runs and decides.
    h.noteInsert(true, 10);
    s.answer = 'fail';
    h.noteInsert(false, 10);
    expect(h.reachable).toBe(true);
    await h.tick();
    expect(s.queries).toBe(4);
    expect(h.reachable).toBe(false);
    // While down, a quick insert brings it back up (as before this skip existed).
    h.noteInsert(true, 10);
    expect(h.reachable).toBe(true);
  });

  it('always runs the probe of a cluster (every shard), however fresh an insert is', async () => {
    const s = fakeStore();
    let probes = 0;
    const cluster = { ...s, probe: (): Promise<void> => { probes++; return Promise.resolve(); } };
    const h = new StoreHealth(cluster, log().logger, { intervalMs: 2_000, timeoutMs: 50, now: () => 0 });
    h.noteInsert(true, 10);
    await h.tick();
    await h.tick();
    expect(probes).toBe(2);
  });
});
