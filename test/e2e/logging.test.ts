// The process logger through the real `fleetgw serve` (issue 9 part 9): JSON lines with level, time and
// component; one access line per request with the route template, the key id and the request id;
// X-Request-Id echoed (or minted), traceparent's trace id logged; never a secret; pretty on request;
// start-up failures that name the part and the thing at fault.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RobotAgent } from '../../src/agent/index.js';
import { parseLogLines } from '../support/capture-log.js';
import { adminJson, fleetgw } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

type Line = Record<string, unknown>;

describe('fleetgw serve logs JSON lines (stderr is not a terminal)', () => {
  const d = makeDataDir('fleetgw-log-');
  let gw: RunningGateway;
  const lines = (): Line[] => parseLogLines(gw.stderr());
  const access = (requestId: string): Line | undefined => lines().find((l) => l.requestId === requestId && l.route !== undefined && l.status !== undefined);

  beforeAll(async () => {
    gw = await startGatewayProcess(d.dataDir);
  });
  afterAll(async () => {
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('writes one access line per request: method, route template, status, duration, key id, request id; echoes X-Request-Id', async () => {
    const robot = adminJson<{ robotId: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']);
    const res = await api(gw.ready.http, d.apiKey, `/v1/robots/${robot.robotId}`, { headers: { 'x-request-id': 'client-req-0001' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('client-req-0001');
    await until(() => access('client-req-0001') !== undefined, 5000, 'access line');
    const line = access('client-req-0001')!;
    expect(line).toMatchObject({ level: 'info', component: 'http', method: 'GET', route: '/v1/robots/{robot_id}', status: 200, keyId: d.apiKeyId, requestId: 'client-req-0001' });
    expect(typeof line.time).toBe('string');
    expect(Number.isNaN(Date.parse(line.time as string))).toBe(false);
    expect(typeof line.durationMs).toBe('number');
    // The template, not the raw path.
    expect(JSON.stringify(line)).not.toContain(robot.robotId);
    expect(lines().filter((l) => l.requestId === 'client-req-0001')).toHaveLength(1);
  });

  it('mints a request id when the caller sends none or an unsafe one, and logs unmatched and unauthenticated requests too', async () => {
    const none = await fetch(`${gw.ready.http}/v1/no-such-route`);
    const minted = none.headers.get('x-request-id') ?? '';
    expect(none.status).toBe(404);
    expect(minted).toMatch(UUID);
    await until(() => access(minted) !== undefined, 5000, 'access line of the 404');
    expect(access(minted)).toMatchObject({ route: null, status: 404, keyId: null });

    for (const bad of ['has space', 'a'.repeat(129), 'quote"d', 'x,y']) {
      const r = await fetch(`${gw.ready.http}/v1/me`, { headers: { 'x-request-id': bad } });
      expect(r.status).toBe(401);
      const id = r.headers.get('x-request-id') ?? '';
      expect(id, bad).toMatch(UUID);
      await until(() => access(id) !== undefined, 5000, 'access line of the 401');
      expect(access(id)).toMatchObject({ route: '/v1/me', status: 401, keyId: null });
    }
  });

  it('logs the trace id of a valid traceparent and ignores an invalid one', async () => {
    const ok = await api(gw.ready.http, d.apiKey, '/v1/me', { headers: { 'x-request-id': 'trace-ok', traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` } });
    expect(ok.status).toBe(200);
    const zero = await api(gw.ready.http, d.apiKey, '/v1/me', { headers: { 'x-request-id': 'trace-zero', traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` } });
    expect(zero.status).toBe(200);
    await until(() => access('trace-ok') !== undefined && access('trace-zero') !== undefined, 5000, 'access lines');
    expect(access('trace-ok')?.traceId).toBe(TRACE_ID);
    expect(access('trace-zero')?.traceId).toBeUndefined();
  });

  it('never writes a secret: API keys (good and bad), stream tickets (in a body and in a query string), robot tokens', async () => {
    const ticket = await api(gw.ready.http, d.apiKey, '/v1/telemetry/stream-tickets', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId }), headers: { 'x-request-id': 'ticket-req' } });
    expect(ticket.status).toBe(201);
    const t = ticket.body.ticket as string;
    // A ticket pasted into a query string, and a wrong key shaped like a real one.
    const leaked = await api(gw.ready.http, d.apiKey, `/v1/robots?ticket=${encodeURIComponent(t)}`);
    expect(leaked.status).toBe(400);
    const wrongKey = `${d.apiKey.slice(0, -6)}AAAAAA`;
    expect((await api(gw.ready.http, wrongKey, '/v1/me')).status).toBe(401);
    // The ticket used on the WebSocket.
    const ws = new WebSocket(ticket.body.url as string);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ op: 'subscribe', ticket: t, robot_ids: [], encoding: 'json' }));
    // A robot connects with its token and goes online: the robot link logs it.
    const robot = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r2']);
    const agent = new RobotAgent({ address: gw.ready.grpc, robotId: robot.robotId, robotToken: robot.robotToken, onCommand: () => ({ accept: true }) });
    agent.start();
    try {
      await until(() => lines().some((l) => l.component === 'robotlink' && l.robotId === robot.robotId), 10_000, 'robot online line');
    } finally {
      await agent.stop();
      ws.close();
    }
    await until(() => access('ticket-req') !== undefined, 5000, 'ticket access line');
    const text = gw.stderr();
    // A key is `fgk_<id>_<secret>`; the secret itself may contain `_` (base64url), so it is what follows the second one.
    const secretOf = (key: string): string => key.split('_').slice(2).join('_');
    for (const secret of [d.apiKey, secretOf(d.apiKey), wrongKey, secretOf(wrongKey), t, encodeURIComponent(t), robot.robotToken]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain('ticket=');
    // Every line is JSON with a level, a time and a component.
    for (const l of lines()) {
      expect(l.raw, String(l.raw)).toBeUndefined();
      expect(typeof l.level).toBe('string');
      expect(typeof l.time).toBe('string');
      expect(typeof l.component).toBe('string');
    }
  });
});

describe('fleetgw serve log options', () => {
  it('--log-format pretty writes readable lines; --log-level warn drops the access log', async () => {
    const d = makeDataDir('fleetgw-log-pretty-');
    const pretty = await startGatewayProcess(d.dataDir, ['--insecure-http', '--log-format', 'pretty']);
    try {
      expect((await api(pretty.ready.http, d.apiKey, '/v1/me', { headers: { 'x-request-id': 'pretty-1' } })).status).toBe(200);
      await until(() => pretty.stderr().includes('pretty-1'), 5000, 'pretty access line');
      const text = pretty.stderr();
      expect(text).toMatch(/INFO.*\[http\] GET \/v1\/me 200/);
      expect(text).toContain('requestId: "pretty-1"');
      expect(parseLogLines(text).filter((l) => l.raw === undefined)).toEqual([]);
    } finally {
      await pretty.stop();
    }
    const quiet = await startGatewayProcess(d.dataDir, ['--insecure-http', '--log-format', 'json', '--log-level', 'warn']);
    try {
      expect((await api(quiet.ready.http, d.apiKey, '/v1/me', { headers: { 'x-request-id': 'quiet-1' } })).status).toBe(200);
      await quiet.stop();
      expect(quiet.stderr()).not.toContain('quiet-1');
      for (const l of parseLogLines(quiet.stderr())) expect(['warn', 'error', 'fatal']).toContain(l.level);
    } finally {
      await quiet.stop();
      rmSync(d.dataDir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown format or level with one usage line naming the allowed values (exit 2)', () => {
    const f = fleetgw(['serve', '--data-dir', '/nonexistent', '--log-format', 'xml']);
    expect(f.status).toBe(2);
    expect(f.stderr.trim()).toBe('fleetgw: --log-format must be one of: json, pretty');
    const l = fleetgw(['serve', '--data-dir', '/nonexistent', '--log-level', 'loud']);
    expect(l.status).toBe(2);
    expect(l.stderr.trim()).toBe('fleetgw: --log-level must be one of: fatal, error, warn, info, debug, trace');
  });
});

describe('fleetgw serve start-up failures name the part and the thing at fault', () => {
  const d = makeDataDir('fleetgw-log-fail-');
  afterAll(() => rmSync(d.dataDir, { recursive: true, force: true }));

  const fatalOf = (stderr: string): Line => {
    const fatal = parseLogLines(stderr).filter((l) => l.level === 'fatal');
    expect(fatal, stderr).toHaveLength(1);
    return fatal[0]!;
  };

  it('a closed ClickHouse port: the gateway starts all the same, its warning names ClickHouse and host:port, never the password', async () => {
    const closed = await freePort();
    const gw = await startGatewayProcess(
      d.dataDir,
      ['--insecure-http', '--clickhouse-url', `http://127.0.0.1:${closed}`, '--clickhouse-user', 'user'],
      { FLEETGW_CLICKHOUSE_PASSWORD: 'hunter2' },
    );
    try {
      expect(gw.ready).toMatchObject({ telemetryStore: 'clickhouse', telemetrySchemaVersion: null });
      const readyz = await fetch(`${gw.ready.http}/readyz`);
      expect(readyz.status).toBe(200);
      expect(await readyz.json()).toMatchObject({ status: 'degraded' });
      await until(() => parseLogLines(gw.stderr()).some((l) => l.msg === 'telemetry store unreachable'), 10_000, 'store warning');
      const warn = parseLogLines(gw.stderr()).find((l) => l.msg === 'telemetry store unreachable')!;
      expect(warn.level).toBe('warn');
      expect(String(warn.error)).toContain(`ClickHouse server at 127.0.0.1:${closed}`);
      expect(String(warn.error)).toContain('ECONNREFUSED');
      expect(parseLogLines(gw.stderr()).filter((l) => l.level === 'fatal')).toEqual([]);
    } finally {
      await gw.stop();
    }
    expect(gw.stderr()).not.toContain('hunter2');
  });

  it('a missing TLS file: exit 1, the message names the file', () => {
    const cert = join(d.dataDir, 'missing-cert.pem');
    const key = join(d.dataDir, 'key.pem');
    writeFileSync(key, 'not a key');
    const r = fleetgw(['serve', '--data-dir', d.dataDir, '--port', '0', '--grpc-port', '0', '--tls-cert', cert, '--tls-key', key]);
    expect(r.status).toBe(1);
    expect(fatalOf(r.stderr).msg).toBe(`fleetgw serve could not start: TLS certificate file ${cert} cannot be read: ENOENT`);
  });

  it('an unusable TLS file: exit 1, the message names both files instead of "App construction failed" alone', () => {
    const cert = join(d.dataDir, 'bad-cert.pem');
    const key = join(d.dataDir, 'bad-key.pem');
    writeFileSync(cert, 'not a certificate');
    writeFileSync(key, 'not a key');
    const r = fleetgw(['serve', '--data-dir', d.dataDir, '--port', '0', '--grpc-port', '0', '--tls-cert', cert, '--tls-key', key]);
    expect(r.status).toBe(1);
    const msg = fatalOf(r.stderr).msg as string;
    expect(msg).toContain(`HTTP server: TLS certificate ${cert} and key ${key} could not be loaded`);
  });
});
