/**
 * deploy/prometheus/rules.yml: valid for `promtool check rules`, every alert unit-tested by
 * deploy/prometheus/rules.test.yml (`promtool test rules`: it fires after its `for:` and is quiet
 * before), yamllint-clean, and mounted by the compose stack where its scrape config looks for it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { missingTools } from './tools.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DIR = join(ROOT, 'deploy/prometheus');
const missing = missingTools(['/usr/bin/promtool', '/usr/bin/yamllint'], 'prometheus yamllint');

interface Rule { alert: string; expr: string; for?: string }
const rules = (parse(readFileSync(join(DIR, 'rules.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
interface AlertTest { eval_time: string; alertname: string; exp_alerts: unknown[] }
const unitTests = parse(readFileSync(join(DIR, 'rules.test.yml'), 'utf8')) as { rule_files: string[]; tests: { alert_rule_test: AlertTest[] }[] };

describe('deploy/prometheus/rules.yml', () => {
  it('covers what docs/operations.md says to watch, each alert tested firing and quiet', () => {
    expect(rules.map((r) => r.alert)).toEqual(expect.arrayContaining([
      'FleetgwDown', 'FleetgwNotReady', 'FleetgwTelemetryStoreDown', 'FleetgwTelemetryStoreBehind', 'FleetgwTelemetrySpoolBacklog',
      'FleetgwTelemetrySpoolFull', 'FleetgwTelemetryDropped', 'FleetgwRobotsOffline', 'FleetgwCommandAcksSlow',
      'FleetgwCommandsUnacknowledged', 'FleetgwEventLoopLag', 'FleetgwMemoryHigh', 'FleetgwCertificateExpiresSoon',
    ]));
    expect(unitTests.rule_files).toEqual(['rules.yml']);
    const cases = unitTests.tests.flatMap((t) => t.alert_rule_test);
    for (const r of rules) {
      const mine = cases.filter((c) => c.alertname === r.alert);
      expect(mine.some((c) => c.exp_alerts.length > 0), `${r.alert} fires in rules.test.yml`).toBe(true);
      expect(mine.some((c) => c.exp_alerts.length === 0), `${r.alert} stays quiet in rules.test.yml`).toBe(true);
    }
    const ops = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    for (const r of rules) expect(ops, `docs/operations.md names ${r.alert}`).toContain(r.alert);
  });

  it('is mounted by compose where prometheus.yml reads it', () => {
    const compose = parse(readFileSync(join(ROOT, 'deploy/compose/compose.yaml'), 'utf8')) as { services: Record<string, { volumes?: string[] }> };
    const prom = parse(readFileSync(join(ROOT, 'deploy/compose/prometheus/prometheus.yml'), 'utf8')) as { rule_files: string[] };
    expect(prom.rule_files).toEqual(['/etc/prometheus/rules.yml']);
    expect(compose.services.prometheus!.volumes).toContain('../prometheus/rules.yml:/etc/prometheus/rules.yml:ro');
  });
});

describe.skipIf(missing.length > 0)(`promtool and yamllint on the rules${missing.length > 0 ? ` (skipped: ${missing.join(', ')} missing)` : ''}`, () => {
  it('promtool check rules accepts every rule', () => {
    const r = spawnSync('/usr/bin/promtool', ['check', 'rules', 'rules.yml'], { encoding: 'utf8', cwd: DIR });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('promtool test rules passes the unit tests', () => {
    const r = spawnSync('/usr/bin/promtool', ['test', 'rules', 'rules.test.yml'], { encoding: 'utf8', cwd: DIR });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('SUCCESS');
  });

  it('yamllint --strict passes on both files', () => {
    const r = spawnSync('/usr/bin/yamllint', ['--strict', '-c', '.yamllint.yaml', 'prometheus/rules.yml', 'prometheus/rules.test.yml'], { encoding: 'utf8', cwd: join(ROOT, 'deploy') });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
