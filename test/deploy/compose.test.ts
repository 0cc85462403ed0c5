/**
 * deploy/compose: the compose file is valid against the Compose Specification schema (the one Debian's
 * docker-compose package ships: no copy vendored here) and for `docker-compose config`; every file it
 * mounts or builds from exists; no secret is written into it; the Dockerfile copies only what exists
 * and runs unprivileged; the YAML passes yamllint and the scrape config passes promtool. Docker itself
 * is not needed (nothing is started).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { missingTools } from './tools.js';

const ROOT = join(import.meta.dirname, '..', '..');
const COMPOSE_DIR = join(ROOT, 'deploy/compose');
const COMPOSE_FILE = join(COMPOSE_DIR, 'compose.yaml');
const SCHEMA = '/usr/lib/python3/dist-packages/compose/config/compose_spec.json';
const missing = missingTools(['/usr/bin/docker-compose', SCHEMA, '/usr/bin/yamllint', '/usr/bin/promtool'], 'docker-compose yamllint prometheus');

interface Service {
  build?: { context: string; dockerfile?: string };
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  secrets?: string[];
}
interface Compose {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  secrets: Record<string, { file: string }>;
}
const compose = parse(readFileSync(COMPOSE_FILE, 'utf8')) as Compose;
const tmp = mkdtempSync(join(tmpdir(), 'fleetgw-compose-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('deploy/compose/compose.yaml', () => {
  it('has the gateway, ClickHouse, Prometheus and Grafana', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['clickhouse', 'gateway', 'grafana', 'prometheus']);
  });

  it('mounts and builds only from files that exist in the repository', () => {
    const gw = compose.services.gateway!;
    expect(existsSync(join(COMPOSE_DIR, gw.build!.context, gw.build!.dockerfile!))).toBe(true);
    expect(existsSync(join(COMPOSE_DIR, compose.services.grafana!.build!.context, 'Dockerfile'))).toBe(true);
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const v of svc.volumes ?? []) {
        const source = v.split(':')[0]!;
        if (source.startsWith('.')) expect(existsSync(join(COMPOSE_DIR, source)), `${name}: ${v}`).toBe(true);
        else expect(Object.keys(compose.volumes), `${name}: ${v}`).toContain(source);
      }
      for (const s of svc.secrets ?? []) expect(Object.keys(compose.secrets), `${name}: secret ${s}`).toContain(s);
    }
  });

  it('holds no secret: passwords come from /run/secrets files, and git ignores the secrets directory', () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries(svc.environment ?? {})) {
        if (/PASSWORD|TOKEN|SECRET/.test(key)) expect(value, `${name}: ${key}`).toMatch(/^\/run\/secrets\//);
      }
      expect((svc.command ?? []).join(' ')).not.toMatch(/--clickhouse-password(\s|=)/);
    }
    expect(compose.services.gateway!.command).toContain('--clickhouse-password-file=/run/secrets/clickhouse_password');
    for (const s of Object.values(compose.secrets)) expect(s.file).toMatch(/^\.\/secrets\//);
    const ignored = spawnSync('git', ['check-ignore', '-q', 'deploy/compose/secrets/clickhouse_password'], { cwd: ROOT });
    expect(ignored.status).toBe(0);
  });

  it('passes every secret a service needs as a flag or file that service reads: the gateway reads the metrics token Prometheus sends', () => {
    const gw = compose.services.gateway!;
    expect(gw.secrets).toEqual(expect.arrayContaining(['clickhouse_password', 'metrics_token']));
    expect(gw.command).toContain('--metrics-token-file=/run/secrets/metrics_token');
    const prom = parse(readFileSync(join(COMPOSE_DIR, 'prometheus/prometheus.yml'), 'utf8')) as { scrape_configs: { authorization: { credentials_file: string } }[] };
    expect(prom.scrape_configs[0]!.authorization.credentials_file).toBe('/run/secrets/metrics_token');
    expect(compose.services.prometheus!.secrets).toContain('metrics_token');
    // Each secret a service is given is one it reads (named in its command, environment or config).
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const secret of svc.secrets ?? []) {
        const read = JSON.stringify([svc.command, svc.environment]) + (name === 'prometheus' ? JSON.stringify(prom) : '')
          + (name === 'grafana' ? readFileSync(join(COMPOSE_DIR, 'grafana/provisioning/datasources/datasources.yaml'), 'utf8') : '');
        expect(read, `${name} reads /run/secrets/${secret}`).toContain(`/run/secrets/${secret}`);
      }
    }
  });

  it('every flag the gateway is started with, in compose and in the systemd unit, is one `fleetgw serve --help` lists', () => {
    const help = spawnSync(process.execPath, [join(ROOT, 'bin/fleetgw.js'), 'serve', '--help'], { encoding: 'utf8' });
    expect(help.status, help.stderr).toBe(0);
    const known = new Set(help.stdout.match(/--[a-z][a-z-]+/g));
    const unit = ['fleetgw.service', 'fleetgw.service.d/clickhouse.conf'].map((f) => readFileSync(join(ROOT, 'deploy', f), 'utf8').replace(/\\\n/g, ' ')).join('\n');
    const execFlags = unit.split('\n').filter((l) => l.startsWith('ExecStart=/')).flatMap((l) => l.match(/ --[a-z][a-z-]+/g) ?? []).map((f) => f.trim());
    const composeFlags = compose.services.gateway!.command!.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]!);
    expect(execFlags).toContain('--data-dir');
    expect(composeFlags).toContain('--metrics-token-file');
    for (const flag of [...execFlags, ...composeFlags]) expect(known.has(flag), `${flag} in fleetgw serve --help`).toBe(true);
  });

  it('downloads nothing when a container starts: no plugin installs, images built or pulled beforehand', () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      expect(Object.keys(svc.environment ?? {}), name).not.toContain('GF_INSTALL_PLUGINS');
    }
    const grafana = compose.services.grafana!;
    expect(grafana.build?.context).toBe('./grafana');
    const dockerfile = readFileSync(join(COMPOSE_DIR, 'grafana/Dockerfile'), 'utf8');
    // The plugin is installed into the image (RUN at build time) at a pinned version, outside the data volume.
    expect(dockerfile).toMatch(/^RUN grafana cli --pluginsDir "\$GF_PATHS_PLUGINS" plugins install grafana-clickhouse-datasource "\$CLICKHOUSE_PLUGIN_VERSION"/m);
    expect(dockerfile).toMatch(/^ARG CLICKHOUSE_PLUGIN_VERSION=\d+\.\d+\.\d+$/m);
    expect(dockerfile).toMatch(/^ENV GF_PATHS_PLUGINS=\/usr\/share\/grafana\//m);
    const ds = parse(readFileSync(join(COMPOSE_DIR, 'grafana/provisioning/datasources/datasources.yaml'), 'utf8')) as { datasources: { type: string }[] };
    expect(ds.datasources.map((x) => x.type)).toEqual(['prometheus', 'grafana-clickhouse-datasource']);
  });

  it('the Dockerfile copies only paths that exist and runs as an unprivileged user', () => {
    const lines = readFileSync(join(ROOT, 'deploy/Dockerfile'), 'utf8').split('\n').filter((l) => !l.startsWith('#'));
    const copies = lines.filter((l) => /^COPY /.test(l) && !l.includes('--from='));
    expect(copies.length).toBeGreaterThan(3);
    for (const l of copies) {
      const parts = l.split(/\s+/).slice(1);
      for (const src of parts.slice(0, -1)) expect(existsSync(join(ROOT, src)), l).toBe(true);
    }
    expect(lines.filter((l) => l.startsWith('FROM ')).every((l) => /^FROM node:24-trixie(-slim)?( AS \w+)?$/.test(l))).toBe(true);
    expect(lines.filter((l) => l.startsWith('USER ')).at(-1)).toBe('USER node');
    expect(lines.some((l) => l.startsWith('ENTRYPOINT ["node", "/opt/fleet-gateway/bin/fleetgw.js"]'))).toBe(true);
  });
});

describe.skipIf(missing.length > 0)(`deploy/ linters${missing.length > 0 ? ` (skipped: ${missing.join(', ')} missing)` : ''}`, () => {
  it('validates against the Compose Specification JSON schema', () => {
    const schema = JSON.parse(readFileSync(SCHEMA, 'utf8')) as Record<string, unknown>;
    // The file names draft 2019-09 as `http://…/schema#` (ajv registers it as https, no #) and labels
    // its definitions with draft-04 `id`s (annotations here, never referenced): drop the first, and let
    // ajv ignore `id` (it refuses the keyword by default). The Ajv2019 instance applies 2019-09 anyway.
    expect(schema.$schema).toBe('http://json-schema.org/draft/2019-09/schema#');
    delete schema.$schema;
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    ajv.removeKeyword('id');
    const validate = ajv.compile(schema);
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
    // The check is real: a misspelt key is rejected.
    expect(validate({ ...compose, services: { ...compose.services, gateway: { ...compose.services.gateway, restrat: 'always' } } })).toBe(false);
  });

  it('docker-compose config accepts it (interpolation, references, secrets)', () => {
    const r = spawnSync('/usr/bin/docker-compose', ['-f', COMPOSE_FILE, '-p', 'fleetgw', 'config', '-q'], { encoding: 'utf8', cwd: COMPOSE_DIR });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('yamllint --strict passes on every YAML file of deploy/', () => {
    const files = ['compose/compose.yaml', 'compose/prometheus/prometheus.yml', 'compose/grafana/provisioning/datasources/datasources.yaml', 'compose/grafana/provisioning/dashboards/dashboards.yaml'];
    const r = spawnSync('/usr/bin/yamllint', ['--strict', '-c', '.yamllint.yaml', ...files], { encoding: 'utf8', cwd: join(ROOT, 'deploy') });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('promtool check config passes on the scrape config', () => {
    // promtool opens credentials_file: point it at a temp token file.
    const token = join(tmp, 'metrics_token');
    writeFileSync(token, 'token\n');
    const config = join(tmp, 'prometheus.yml');
    // And the rules file at its path in the repository (compose mounts it at /etc/prometheus/rules.yml).
    writeFileSync(config, readFileSync(join(COMPOSE_DIR, 'prometheus/prometheus.yml'), 'utf8').replace('/run/secrets/metrics_token', token)
      .replace('/etc/prometheus/rules.yml', join(ROOT, 'deploy/prometheus/rules.yml')));
    const r = spawnSync('/usr/bin/promtool', ['check', 'config', config], { encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('SUCCESS');
    expect(r.stdout).toContain('rules.yml');
  });
});
