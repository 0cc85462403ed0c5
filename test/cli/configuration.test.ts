/**
 * The environment is parsed once (src/config.ts): docs/configuration.md lists exactly the variables
 * config.ts reads, nothing in src/ names another, and a value that is not accepted stops `fleetgw serve`
 * and `fleetgw sim` with exit 2 and one line naming the variable and what it accepts, through the real
 * CLI (dist: `npm run build` first). A good value reaches the module that uses it.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES, parseConfig } from '../../src/config.js';
import { fleetgw } from '../support/cli.js';
import { makeDataDir, startGatewayProcess } from '../support/gateway.js';

const root = new URL('../../', import.meta.url);

/** The runner's environment without any variable of ours (CI may set some for whole directories). */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FLEETGW_')) env[k] = v;
  return { ...env, ...extra };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

describe('the list of environment variables', () => {
  it('docs/configuration.md has one row for each variable config.ts reads, and no other', () => {
    const doc = readFileSync(new URL('docs/configuration.md', root), 'utf8');
    const rows = [...doc.matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map((m) => m[1]!);
    expect(new Set(rows).size).toBe(rows.length);
    expect([...rows].sort()).toEqual([...ENVIRONMENT_VARIABLES].sort());
  });

  it('every FLEETGW_ variable named in src/ is one config.ts reads', () => {
    const named = new Set<string>();
    for (const f of sourceFiles(new URL('src', root).pathname)) {
      for (const m of readFileSync(f, 'utf8').matchAll(/\bFLEETGW_[A-Z0-9_]+\b(?!\*)/g)) named.add(m[0]);
    }
    expect([...named].filter((n) => !ENVIRONMENT_VARIABLES.includes(n))).toEqual([]);
  });

  it.each([
    ['FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS', '30001', "FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS must be at most 30000, got '30001'"],
    ['FLEETGW_HUGE_PAGES', 'yes', "FLEETGW_HUGE_PAGES must be one of: on, off, got 'yes'"],
    ['FLEETGW_CLICKHOUSE_INSERT_FORMAT', 'tsv', "FLEETGW_CLICKHOUSE_INSERT_FORMAT must be one of: auto, native, rowbinary, got 'tsv'"],
    ['FLEETGW_LOG_FORMAT', 'xml', "FLEETGW_LOG_FORMAT must be one of: json, pretty, got 'xml'"],
    ['FLEETGW_CORS_ORIGINS', '*.example.com', "FLEETGW_CORS_ORIGINS: '*.example.com' is not an origin (expected scheme://host[:port])"],
    ['FLEETGW_TEST_FAULT', 'x:explode', "FLEETGW_TEST_FAULT must be <point>:<kill|throw>, got 'x:explode'"],
  ])('parseConfig refuses %s=%s, naming it and the accepted values', (name, value, message) => {
    expect(() => parseConfig({ [name]: value })).toThrow(message);
  });

  it('the parsed configuration is frozen, defaults included', () => {
    const c = parseConfig({});
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.tunables)).toBe(true);
    expect(c).toMatchObject({ telemetryDecoder: 'native', hugePages: 'on', clickhouseInsertFormat: 'auto', corsOrigins: [], testFault: undefined });
    expect(parseConfig({ FLEETGW_TEST_FAULT: 'command-fire.submitted:kill', FLEETGW_LOG_LEVEL: '' }))
      .toMatchObject({ testFault: { point: 'command-fire.submitted', kind: 'kill' }, logLevel: undefined });
  });
});

describe('a value that is not accepted is a usage error naming the variable', () => {
  const d = makeDataDir('fleetgw-config-');
  afterAll(() => rmSync(d.dataDir, { recursive: true, force: true }));
  const serve = ['serve', '--data-dir', d.dataDir, '--insecure-http', '--port', '0', '--grpc-port', '0'];

  it.each([
    ['FLEETGW_RATE_LIMIT_RPS', 'fast', "FLEETGW_RATE_LIMIT_RPS must be a positive integer, got 'fast'"],
    ['FLEETGW_TELEMETRY_DECODER', 'wasm', "FLEETGW_TELEMETRY_DECODER must be one of: native, js, reference, got 'wasm'"],
    ['FLEETGW_LOG_LEVEL', 'loud', "FLEETGW_LOG_LEVEL must be one of: fatal, error, warn, info, debug, trace, got 'loud'"],
    ['FLEETGW_TEST_FAULT', 'mission-tool.after-commit', "FLEETGW_TEST_FAULT must be <point>:<kill|throw>, got 'mission-tool.after-commit'"],
  ])('fleetgw serve with %s=%s exits 2', (name, value, message) => {
    const r = fleetgw(serve, cleanEnv({ [name]: value }));
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`fleetgw: ${message}\n`);
  });

  it('a malformed secret is named, never quoted', () => {
    const r = fleetgw(serve, cleanEnv({ FLEETGW_ROBOT_TOKEN: 'tok en-s3cret' }));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('FLEETGW_ROBOT_TOKEN must hold one robot token');
    expect(r.stderr).not.toContain('s3cret');
  });

  it('fleetgw sim checks the environment too', () => {
    const r = fleetgw(['sim', '--grpc', '127.0.0.1:1', '--robots-file', '/nonexistent'], cleanEnv({ FLEETGW_LOG_FORMAT: 'xml' }));
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("fleetgw: FLEETGW_LOG_FORMAT must be one of: json, pretty, got 'xml'\n");
  });

  it('an accepted value reaches the telemetry core: FLEETGW_TELEMETRY_DECODER=js runs the JavaScript reader', async () => {
    const gw = await startGatewayProcess(d.dataDir, ['--insecure-http'], { FLEETGW_TELEMETRY_DECODER: 'js' });
    try {
      expect(gw.ready.telemetryDecoder).toBe('js');
    } finally {
      await gw.stop();
    }
  });
});
