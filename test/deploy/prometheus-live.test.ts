/**
 * deploy/'s Prometheus config on a real Prometheus (Debian's `prometheus`): it scrapes a real
 * `fleetgw serve` (HTTPS with its self-signed pair, the metrics token from `--metrics-token-file`, a
 * private clickhouse-server as the store) fed by a real `fleetgw sim`, with deploy's scrape config and
 * alert rules. Every PromQL query of the Grafana dashboard and every series each alert rule reads
 * return data through Prometheus' HTTP API, every rule expression evaluates, and no alert fires on the
 * healthy gateway. Then the ClickHouse server is killed, and FleetgwTelemetryStoreDown must fire within
 * its `for:` plus a scrape and an evaluation once Prometheus has seen `fleetgw_telemetry_store_up` 0.
 *
 * What the test changes in deploy's files, and only that: the target (the gateway's loopback port),
 * the token file's path, the rules file's path, the scrape and evaluation intervals (15 s -> 1 s), and
 * the store alert's `for:` (shipped 2m, here {@link STORE_DOWN_FOR}) so the test takes seconds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startClickHouseServer, type ClickHouseTestServer } from '../support/clickhouse-server.js';
import { adminJson } from '../support/cli.js';
import { httpsGet, type HttpsAnswer } from '../support/https.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { startSim } from '../support/stream-client.js';
import { until } from '../support/until.js';
import { missingTools } from './tools.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PROMETHEUS = '/usr/bin/prometheus';
const noPrometheus = missingTools([PROMETHEUS], 'prometheus');
const noClickHouse = inject('clickhouseUrl') === null;
const skipReason = noPrometheus.length > 0 ? `${noPrometheus.join(', ')} missing` : String(inject('clickhouseSkipReason'));
const INTERVAL_S = 1;
const STORE_DOWN_FOR_S = 10;
const STORE_DOWN_FOR = `${STORE_DOWN_FOR_S}s`;

interface Panel { title: string; type: string; targets?: { expr?: string; rawSql?: string }[] }
interface Rule { alert: string; expr: string; for?: string }
interface PromVector { status: string; error?: string; data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } }
interface PromAlerts { data: { alerts: { labels: Record<string, string>; state: string; activeAt: string }[] } }

const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/compose/grafana/dashboards/fleetgw.json'), 'utf8')) as { panels: Panel[] };
const panelQueries = dashboard.panels.flatMap((p) => (p.targets ?? []).filter((t) => t.expr !== undefined).map((t) => ({ title: p.title, expr: t.expr! })));
const rulesText = readFileSync(join(ROOT, 'deploy/prometheus/rules.yml'), 'utf8');
const rules = (parse(rulesText) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

/** The series names a PromQL expression reads (not functions, keywords or label names). */
function seriesNames(expr: string): string[] {
  const noLabels = expr.replace(/\{[^}]*\}/g, '').replace(/\[[^\]]*\]/g, '');
  return [...new Set(noLabels.match(/\b(fleetgw_[a-z0-9_]+|nodejs_[a-z0-9_]+|process_[a-z0-9_]+|up)\b/g) ?? [])];
}

describe.skipIf(noPrometheus.length > 0 || noClickHouse)(`deploy's scrape config and rules on a real Prometheus${noPrometheus.length > 0 || noClickHouse ? ` (skipped: ${skipReason})` : ''}`, () => {
  const work = mkdtempSync(join(tmpdir(), 'fleetgw-prom-live-'));
  let server: ClickHouseTestServer;
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;
  let sim: ChildProcess | undefined;
  let prometheus: ChildProcess | undefined;
  let promLog = '';
  let promUrl = '';
  let ca: Buffer;
  let robots: { robotId: string; robotToken: string }[] = [];

  const gatewayGet = (path: string, headers: Record<string, string>): Promise<HttpsAnswer> => httpsGet(`${gw.ready.http}${path}`, ca, headers);
  const query = async (expr: string): Promise<PromVector> => {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await res.json()) as PromVector;
  };
  const alerts = async (): Promise<PromAlerts['data']['alerts']> => ((await (await fetch(`${promUrl}/api/v1/alerts`)).json()) as PromAlerts).data.alerts;

  beforeAll(async () => {
    server = await startClickHouseServer();
    d = makeDataDir('fleetgw-prom-live-');
    robots = [1, 2, 3].map((i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`]));
    // The token file as the compose stack makes it (docs/operations.md): openssl rand -hex 32.
    const metricsToken = randomBytes(32).toString('hex');
    const tokenFile = join(work, 'metrics_token');
    writeFileSync(tokenFile, `${metricsToken}\n`, { mode: 0o600 });
    // HTTPS (the self-signed pair in the data dir), as the compose gateway serves.
    gw = await startGatewayProcess(d.dataDir, ['--metrics-token-file', tokenFile, '--clickhouse-url', `${server.url}/fleet`]);
    ca = readFileSync(join(d.dataDir, 'tls', 'cert.pem'));
    sim = await startSim(work, gw.ready.grpc, robots, 20);

    const config = parse(readFileSync(join(ROOT, 'deploy/compose/prometheus/prometheus.yml'), 'utf8')) as {
      global: { scrape_interval: string; evaluation_interval: string };
      rule_files: string[];
      scrape_configs: { authorization: { credentials_file: string }; static_configs: { targets: string[] }[] }[];
    };
    config.global.scrape_interval = `${INTERVAL_S}s`;
    config.global.evaluation_interval = `${INTERVAL_S}s`;
    const job = config.scrape_configs[0]!;
    job.authorization.credentials_file = tokenFile;
    job.static_configs[0]!.targets = [new URL(gw.ready.http).host];
    const shipped = rules.find((r) => r.alert === 'FleetgwTelemetryStoreDown')!;
    expect(shipped.for).toBe('2m');
    const testRules = rulesText.replace(/(alert: FleetgwTelemetryStoreDown\n\s+expr: [^\n]+\n\s+for: )2m/, `$1${STORE_DOWN_FOR}`);
    expect(testRules).not.toBe(rulesText);
    writeFileSync(join(work, 'rules.yml'), testRules);
    config.rule_files = [join(work, 'rules.yml')];
    writeFileSync(join(work, 'prometheus.yml'), stringify(config));

    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(PROMETHEUS, [`--config.file=${join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${join(work, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    prometheus.stderr!.setEncoding('utf8');
    prometheus.stderr!.on('data', (c: string) => (promLog = (promLog + c).slice(-20_000)));
    await until(async () => {
      if (prometheus!.exitCode !== null) throw new Error(`prometheus exited ${String(prometheus!.exitCode)}:\n${promLog}`);
      return (await fetch(`${promUrl}/-/ready`).catch(() => null))?.status === 200;
    }, 30_000, 'prometheus ready');
  }, 90_000);

  afterAll(async () => {
    prometheus?.kill('SIGKILL');
    sim?.kill('SIGKILL');
    await gw?.stop('SIGKILL');
    await server?.dispose();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('scrapes the gateway with the token file, and every dashboard query returns data', async () => {
    // REST traffic for the HTTP panels (a 200 and a 404).
    expect((await gatewayGet(`/v1/robots/${robots[0]!.robotId}`, { authorization: `Bearer ${d.apiKey}` })).status).toBe(200);
    expect((await gatewayGet('/v1/nothing-here', { authorization: `Bearer ${d.apiKey}` })).status).toBe(404);
    // The token file is the only credential /metrics takes.
    expect((await gatewayGet('/metrics', { authorization: `Bearer ${d.apiKey}` })).status).toBe(401);

    await until(async () => (await query('up{job="fleetgw"}')).data.result[0]?.value[1] === '1', 30_000, `Prometheus scrapes the gateway (log: ${promLog.slice(-2_000)})`);
    // rate() needs two samples in its window: wait for each panel query, with Grafana's
    // $__rate_interval as it is at a 1 s scrape interval (at least 4 scrapes).
    const empty = new Set(panelQueries.map((q) => q.expr));
    await until(async () => {
      // Requests keep coming, as on a used gateway (a p99 over a window without one is NaN: no line).
      await gatewayGet(`/v1/robots/${robots[1]!.robotId}`, { authorization: `Bearer ${d.apiKey}` });
      for (const q of panelQueries) {
        if (!empty.has(q.expr)) continue;
        const r = await query(q.expr.replaceAll('$__rate_interval', '15s'));
        expect(r.status, `${q.title}: ${q.expr}: ${r.error ?? ''}`).toBe('success');
        if (r.data.result.length > 0 && r.data.result.some((s) => s.value[1] !== 'NaN')) empty.delete(q.expr);
      }
      return empty.size === 0;
    }, 60_000, 'every dashboard query returns data', 250).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; still empty: ${[...empty].join(' | ')}`);
    });
    // The samples the simulator sends are counted and stored.
    expect(Number((await query('sum(fleetgw_telemetry_samples_stored_total)')).data.result[0]?.value[1])).toBeGreaterThan(0);
  }, 90_000);

  it('every alert rule evaluates, every series it reads exists, and none fires on the healthy gateway', async () => {
    for (const rule of rules) {
      const r = await query(rule.expr);
      expect(r.status, `${rule.alert}: ${r.error ?? ''}`).toBe('success');
      for (const name of seriesNames(rule.expr)) {
        const n = await query(`count(${name})`);
        expect(Number(n.data.result[0]?.value[1] ?? 0), `${rule.alert} reads ${name}, which Prometheus has`).toBeGreaterThan(0);
      }
    }
    // The drop reasons exist at 0 before any drop, so the first one is an increase.
    const reasons = (await query('fleetgw_telemetry_frames_dropped_total')).data.result.map((s) => s.metric.reason).sort();
    expect(reasons).toEqual(['corrupt', 'shutting_down', 'worker_crash']);
    expect((await alerts()).filter((a) => a.state === 'firing')).toEqual([]);
  });

  it(`fires FleetgwTelemetryStoreDown within its for: (${STORE_DOWN_FOR} here) plus a scrape once ClickHouse is down`, async () => {
    await until(async () => (await query('fleetgw_telemetry_store_up')).data.result[0]?.value[1] === '1', 30_000, 'store up in Prometheus');
    const stoppedAt = Date.now();
    await server.stop('SIGKILL');
    await until(async () => (await query('fleetgw_telemetry_store_up')).data.result[0]?.value[1] === '0', 30_000, 'Prometheus sees fleetgw_telemetry_store_up 0');
    const seenDownAt = Date.now();
    await until(async () => (await alerts()).some((a) => a.labels.alertname === 'FleetgwTelemetryStoreDown' && a.state === 'firing'), 60_000, 'FleetgwTelemetryStoreDown firing');
    const firedAt = Date.now();
    // for: + one scrape + one evaluation, and 2 s for the polling and a loaded machine.
    const bound = STORE_DOWN_FOR_S * 1000 + 2 * INTERVAL_S * 1000 + 2_000;
    console.log(`[prometheus-live] store stopped -> store_up 0 in Prometheus ${seenDownAt - stoppedAt} ms -> alert firing ${firedAt - seenDownAt} ms (bound ${bound} ms)`);
    expect(firedAt - seenDownAt).toBeLessThanOrEqual(bound);
    const fired = (await alerts()).find((a) => a.labels.alertname === 'FleetgwTelemetryStoreDown')!;
    expect(fired.labels).toMatchObject({ severity: 'warning', job: 'fleetgw', depot: 'depot-1' });
  }, 120_000);
});
