/**
 * The Grafana dashboard (deploy/compose/grafana/dashboards/fleetgw.json) is consistent with its
 * provisioning: every panel and query names a provisioned datasource of the same type, ids and
 * positions are sound, the dashboards provider reads the mounted folder. Its ClickHouse SQL runs on a
 * real server against the schema the gateway creates (macros expanded as the plugin does), and its
 * PromQL passes `promtool check rules`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { openClickHouseStore } from '../../src/telemetry/store/clickhouse-store.js';
import { missingTools } from './tools.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DIR = join(ROOT, 'deploy/compose');
const url = inject('clickhouseUrl');
const skipReason = inject('clickhouseSkipReason');
const noPromtool = missingTools(['/usr/bin/promtool'], 'prometheus');

interface Datasource { name: string; uid: string; type: string; jsonData?: Record<string, unknown>; secureJsonData?: Record<string, string> }
interface Target { refId: string; datasource: { type: string; uid: string }; expr?: string; rawSql?: string }
interface Panel { id: number; type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; datasource?: { type: string; uid: string }; targets?: Target[] }

const datasources = (parse(readFileSync(join(DIR, 'grafana/provisioning/datasources/datasources.yaml'), 'utf8')) as { datasources: Datasource[] }).datasources;
const providers = (parse(readFileSync(join(DIR, 'grafana/provisioning/dashboards/dashboards.yaml'), 'utf8')) as { providers: { options: { path: string } }[] }).providers;
const compose = parse(readFileSync(join(DIR, 'compose.yaml'), 'utf8')) as { services: Record<string, { volumes?: string[]; secrets?: string[]; command?: string[] }> };
const dashboard = JSON.parse(readFileSync(join(DIR, 'grafana/dashboards/fleetgw.json'), 'utf8')) as { uid: string; title: string; panels: Panel[] };
const panels = dashboard.panels.filter((p) => p.type !== 'row');
const targets = panels.flatMap((p) => p.targets ?? []);
const tmp = mkdtempSync(join(tmpdir(), 'fleetgw-grafana-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The metric names the dashboard reads (the lead reconciles them with src/…/metrics when both land). */
const DASHBOARD_METRICS = [
  'fleetgw_robots_online', 'fleetgw_http_requests_total', 'fleetgw_http_request_duration_seconds_bucket', 'fleetgw_commands_total',
  'fleetgw_telemetry_samples_received_total', 'fleetgw_telemetry_samples_stored_total', 'fleetgw_telemetry_frames_dropped_total',
  'fleetgw_telemetry_spool_bytes', 'nodejs_eventloop_lag_p99_seconds', 'process_cpu_seconds_total',
];

describe('Grafana provisioning and dashboard', () => {
  it('every panel and query uses a provisioned datasource of the same type', () => {
    const byUid = new Map(datasources.map((d) => [d.uid, d]));
    expect(panels.length).toBeGreaterThan(8);
    for (const p of panels) {
      expect(p.datasource, p.title).toBeDefined();
      expect(byUid.get(p.datasource!.uid)?.type, p.title).toBe(p.datasource!.type);
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) {
        expect(t.datasource, `${p.title} ${t.refId}`).toEqual(p.datasource);
        expect(t.expr ?? t.rawSql, `${p.title} ${t.refId}`).toBeTruthy();
      }
      expect(new Set(p.targets!.map((t) => t.refId)).size, p.title).toBe(p.targets!.length);
    }
    expect(new Set(datasources.map((d) => d.type))).toEqual(new Set(['prometheus', 'grafana-clickhouse-datasource']));
  });

  it('uses only panel types built into Grafana (no panel plugin to install)', () => {
    for (const p of dashboard.panels) expect(['row', 'stat', 'timeseries', 'table', 'gauge', 'bargauge', 'text'], p.title).toContain(p.type);
  });

  it('has unique panel ids and positions inside the 24-column grid', () => {
    expect(dashboard.uid).toBe('fleetgw-overview');
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    for (const p of dashboard.panels) expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
  });

  it('reads exactly the metric names listed for reconciliation with /metrics', () => {
    const used = new Set(targets.flatMap((t) => (t.expr ?? '').match(/\b(fleetgw|nodejs|process)_[a-z0-9_]+/g) ?? []));
    expect([...used].sort()).toEqual([...DASHBOARD_METRICS].sort());
  });

  it('is wired into compose: provider path mounted, ClickHouse password from the secret, database of the gateway', () => {
    const grafana = compose.services.grafana!;
    expect(grafana.volumes).toContain(`./grafana/dashboards:${providers[0]!.options.path}:ro`);
    const ch = datasources.find((d) => d.type === 'grafana-clickhouse-datasource')!;
    expect(ch.secureJsonData?.password).toBe('$__file{/run/secrets/clickhouse_password}');
    expect(grafana.secrets).toContain('clickhouse_password');
    expect(compose.services.gateway!.command).toContain(`--clickhouse-url=http://${String(ch.jsonData?.host)}:${String(ch.jsonData?.port)}/${String(ch.jsonData?.defaultDatabase)}`);
    const prom = datasources.find((d) => d.type === 'prometheus')!;
    expect(prom).toMatchObject({ url: 'http://prometheus:9090' });
  });
});

describe.skipIf(url === null)(`dashboard SQL on a ClickHouse server${url === null ? ` (skipped: ${skipReason})` : ''}`, () => {
  const database = `fleetgw_dash_${process.pid}_${Date.now()}`;
  afterAll(async () => {
    if (url !== null) await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
  });

  it('every ClickHouse query runs against the schema the gateway creates, and returns rows', async () => {
    const store = await openClickHouseStore({ url: `${url!}/${database}` });
    try {
      const now = Date.now();
      await fetch(`${url!}/?database=${database}`, {
        method: 'POST',
        body: `INSERT INTO telemetry_samples (robot_id, fleet_id, ts_ms, received_at_ms, battery_pct, mode, health_level) VALUES
          ('r1', 'f1', ${now - 60_000}, ${now - 59_900}, 80, 'autonomous', 'ok'), ('r2', 'f1', ${now - 30_000}, ${now - 29_000}, 20, 'manual', 'warn')`,
      });
      // The plugin's macro: the panel's time range on the column.
      const expand = (sql: string): string => sql.replaceAll('$__timeFilter(ts)', 'ts >= toDateTime(now() - 3600) AND ts <= toDateTime(now() + 60)');
      const sqls = targets.filter((t) => t.rawSql !== undefined);
      expect(sqls.length).toBeGreaterThanOrEqual(5);
      for (const t of sqls) {
        const text = await store.queryText(expand(t.rawSql!));
        expect(text.trim().split('\n').length, t.rawSql).toBeGreaterThanOrEqual(1);
        expect(text.trim(), t.rawSql).not.toBe('');
      }
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(noPromtool.length > 0)('dashboard PromQL', () => {
  it('every expression parses (promtool check rules)', () => {
    const rules = {
      groups: [{ name: 'dashboard', rules: targets.filter((t) => t.expr !== undefined).map((t, i) => ({ record: `dashboard:expr_${i}`, expr: t.expr!.replaceAll('$__rate_interval', '5m') })) }],
    };
    const file = join(tmp, 'rules.json');
    writeFileSync(file, JSON.stringify(rules));
    const r = spawnSync('/usr/bin/promtool', ['check', 'rules', file], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`SUCCESS: ${rules.groups[0]!.rules.length} rules found`);
  });
});
