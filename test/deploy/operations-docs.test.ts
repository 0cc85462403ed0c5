/**
 * The shell blocks of docs/operations.md, run as the docs give them. Every ```sh block carries a
 * `<!-- run-by: … -->` line naming what runs it; those naming this file run here, the others name the
 * test or CI pass that runs the same commands. Paths are pointed at temp directories:
 * `/opt/fleet-gateway` is this checkout, `/var/lib/fleetgw` a temp data dir, `/var/backups/fleetgw` a
 * temp directory; `runuser -u fleetgw --` is left out (the test runs as one user). What cannot run here
 * is stood in for, and said so in the docs: `docker compose` (no Docker engine: `build`, `pull` and `up`
 * become `docker-compose config` on the stack with the secrets the block made, `exec gateway CMD` runs
 * CMD on the host), `systemctl stop/start fleetgw` (the test stops and starts its gateway) and `chown`
 * (skipped). The scrape config in "Prometheus scrape config" goes through `promtool check config`.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { adminJson } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { missingTools } from './tools.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
const THIS = 'test/deploy/operations-docs.test.ts';
const missing = missingTools(['/usr/bin/docker-compose', '/usr/bin/promtool', '/usr/bin/openssl'], 'docker-compose prometheus openssl');
const work = mkdtempSync(join(tmpdir(), 'fleetgw-opsdocs-'));
const running: RunningGateway[] = [];
afterAll(async () => {
  for (const gw of running) await gw.stop('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

interface Block { lang: string; marker: string | null; text: string }

/** The fenced blocks of the doc, each with the `<!-- run-by|checked-by: … -->` line just above it. */
function blocks(): Block[] {
  const out: Block[] = [];
  const lines = DOC.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)$/.exec(lines[i]!);
    if (open === null) continue;
    const end = lines.indexOf('```', i + 1);
    const above = lines[i - 1] ?? '';
    const marker = /^<!-- ((?:run|checked)-by: .*) -->$/.exec(above)?.[1] ?? null;
    out.push({ lang: open[1]!, marker, text: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return out;
}

/** The block whose first command starts with `start`. */
function block(start: string): Block {
  const found = blocks().filter((b) => b.text.startsWith(start));
  expect(found, `one block starting with ${start}`).toHaveLength(1);
  expect(found[0]!.marker, `${start}: run-by marker`).toContain(THIS);
  return found[0]!;
}

/** Commands of a block, continuation lines joined, comments kept (bash drops them). */
function commands(text: string): string[] {
  return text.replace(/\\\n\s*/g, '').split('\n').filter((l) => l.trim() !== '');
}

const paths = (dataDir: string, backups: string) => (cmd: string): string =>
  cmd.replaceAll('runuser -u fleetgw -- ', '').replaceAll('/opt/fleet-gateway', ROOT).replaceAll('/var/lib/fleetgw', dataDir).replaceAll('/var/backups/fleetgw', backups);

/** Runs `script` in bash -e (node on PATH is the one running the tests). */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('/bin/bash', ['-euo', 'pipefail', '-c', script], { cwd, encoding: 'utf8', env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('docs/operations.md', () => {
  it('names what runs each shell block', () => {
    const sh = blocks().filter((b) => b.lang === 'sh');
    expect(sh.length).toBeGreaterThanOrEqual(6);
    for (const b of sh) expect(b.marker, b.text.split('\n')[0]).toMatch(/^run-by: /);
    for (const b of blocks().filter((x) => x.lang === 'yaml')) expect(b.marker, b.text.split('\n')[0]).toMatch(/^checked-by: /);
    // Every block this file claims is one of the cases below.
    const mine = sh.filter((b) => b.marker!.includes(THIS)).map((b) => b.text.split('\n')[0]);
    expect(mine).toEqual(['runuser -u fleetgw -- node /opt/fleet-gateway/bin/fleetgw.js admin init --data-dir /var/lib/fleetgw --org NAME --fleet NAME', 'cd deploy/compose', 'runuser -u fleetgw -- node /opt/fleet-gateway/bin/fleetgw.js admin backup \\', 'systemctl stop fleetgw']);
  });

  it('Install, step 7: admin init on an empty data dir', () => {
    const dataDir = join(work, 'install');
    const r = bash(commands(block('runuser -u fleetgw -- node /opt/fleet-gateway/bin/fleetgw.js admin init').text).map(paths(dataDir, '')).join('\n'), work);
    expect(r.status, r.stderr).toBe(0);
    expect(adminJson<{ orgs: { name: string }[] }>(['list-orgs', '--data-dir', dataDir]).orgs).toMatchObject([{ name: 'NAME' }]);
  });

  describe.skipIf(missing.length > 0)(`Docker Compose block, and the scrape config${missing.length > 0 ? ` (skipped: ${missing.join(', ')} missing)` : ''}`, () => {
    it('makes secrets the stack and the gateway accept; the docker compose steps pass docker-compose config', async () => {
      const root = join(work, 'checkout');
      cpSync(join(ROOT, 'deploy'), join(root, 'deploy'), { recursive: true, filter: (src) => !/\/secrets\/(?!README\.md|\.gitignore)[^/]+$/.test(src) });
      const shim = join(work, 'shim');
      mkdirSync(shim);
      const calls = join(work, 'docker-calls');
      const dataDir = join(work, 'compose-data');
      // docker compose, stood in for (the header says why and how).
      writeFileSync(join(shim, 'docker'), `#!/bin/bash
set -euo pipefail
echo "$*" >> "$DOCKER_CALLS"
[ "$1 $2 $3" = "compose -p fleetgw" ] || { echo "unexpected docker call: $*" >&2; exit 2; }
case "$4" in
  build|pull|up) exec /usr/bin/docker-compose -p fleetgw config -q ;;
  exec)
    [ "$5" = gateway ] || exit 2
    shift 5
    args=()
    for a in "$@"; do a="\${a//\\/opt\\/fleet-gateway/$FLEETGW_ROOT}"; args+=("\${a//\\/var\\/lib\\/fleetgw/$FLEETGW_DATA}"); done
    exec "\${args[@]}" ;;
  *) echo "unexpected docker compose call: $*" >&2; exit 2 ;;
esac
`, { mode: 0o755 });
      const r = bash(block('cd deploy/compose').text, root, { PATH: `${shim}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`, DOCKER_CALLS: calls, FLEETGW_ROOT: ROOT, FLEETGW_DATA: dataDir });
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual([
        'compose -p fleetgw build', 'compose -p fleetgw pull clickhouse prometheus', 'compose -p fleetgw up -d',
        'compose -p fleetgw exec gateway node /opt/fleet-gateway/bin/fleetgw.js admin init --data-dir /var/lib/fleetgw --org NAME --fleet NAME',
      ]);
      const secrets = join(root, 'deploy/compose/secrets');
      expect(statSync(secrets).mode & 0o777).toBe(0o700);
      for (const f of ['clickhouse_password', 'grafana_admin_password', 'metrics_token']) {
        expect(statSync(join(secrets, f)).mode & 0o777, f).toBe(0o644);
        expect(readFileSync(join(secrets, f), 'utf8'), f).toMatch(/^\S{16,}\n$/);
      }
      expect(adminJson<{ orgs: { name: string }[] }>(['list-orgs', '--data-dir', dataDir]).orgs).toMatchObject([{ name: 'NAME' }]);
      // The token file as compose hands it to the gateway (--metrics-token-file) opens /metrics.
      const token = join(secrets, 'metrics_token');
      const gw = await startGatewayProcess(dataDir, ['--insecure-http', '--metrics-token-file', token]);
      running.push(gw);
      const scrape = await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${readFileSync(token, 'utf8').trim()}` } });
      expect(scrape.status).toBe(200);
      expect(await gw.stop('SIGTERM')).toBe(0);
      running.pop();
    }, 120_000);

    it('the scrape config of "Prometheus scrape config" passes promtool check config', () => {
      const yaml = blocks().find((b) => b.lang === 'yaml' && b.text.includes('job_name: fleetgw'))!;
      expect(yaml.marker).toContain(THIS);
      const config = parse(yaml.text) as { scrape_configs: { authorization: { credentials_file: string }; tls_config: { ca_file: string } }[] };
      const job = config.scrape_configs[0]!;
      expect(job.authorization.credentials_file).toBe('/etc/prometheus/fleetgw-metrics-token');
      job.authorization.credentials_file = join(work, 'token');
      job.tls_config.ca_file = join(work, 'ca.pem');
      writeFileSync(join(work, 'token'), 'x'.repeat(64));
      // promtool checks that the files exist, not what they hold.
      writeFileSync(join(work, 'ca.pem'), '');
      writeFileSync(join(work, 'scrape.yml'), stringify(config));
      const r = spawnSync('/usr/bin/promtool', ['check', 'config', join(work, 'scrape.yml')], { encoding: 'utf8' });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toContain('SUCCESS');
    });
  });

  it('Backup while the gateway runs, then Restore: the restored gateway takes the same API key and metrics token', async () => {
    const d = makeDataDir('fleetgw-opsdocs-live-');
    const backups = join(work, 'backups');
    mkdirSync(backups, { mode: 0o700 });
    const local = paths(d.dataDir, backups);
    let gw = await startGatewayProcess(d.dataDir);
    running.push(gw);
    const metricsToken = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    const backup = bash(commands(block('runuser -u fleetgw -- node /opt/fleet-gateway/bin/fleetgw.js admin backup').text).map(local).join('\n'), work);
    expect(backup.status, backup.stderr).toBe(0);
    const made = readdirSync(backups);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatch(/^\d{4}-\d\d-\d\d-\d{4}$/);
    const restoreBlock = block('systemctl stop fleetgw');
    // The restore names a backup by its date: the one just taken is given that name.
    renameSync(join(backups, made[0]!), join(backups, /--from \/var\/backups\/fleetgw\/(\S+)/.exec(restoreBlock.text)![1]!));
    for (const cmd of commands(restoreBlock.text)) {
      if (cmd === 'systemctl stop fleetgw') {
        expect(await gw.stop('SIGTERM')).toBe(0);
        running.pop();
      } else if (cmd === 'systemctl start fleetgw') {
        gw = await startGatewayProcess(d.dataDir);
        running.push(gw);
      } else if (cmd === 'chown -R fleetgw:fleetgw /var/lib/fleetgw') {
        continue;
      } else {
        const r = bash(local(cmd), work);
        expect(r.status, `${cmd}: ${r.stderr}`).toBe(0);
      }
    }
    expect(statSync(`${d.dataDir}.before-restore`).isDirectory()).toBe(true);
    const me = await fetch(`${gw.ready.http}/v1/me`, { headers: { authorization: `Bearer ${d.apiKey}` } });
    expect(me.status).toBe(200);
    const scrape = await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(scrape.status).toBe(200);
    expect(await gw.stop('SIGTERM')).toBe(0);
    running.pop();
    for (const dir of [d.dataDir, `${d.dataDir}.before-restore`]) rmSync(dir, { recursive: true, force: true });
  }, 120_000);
});
