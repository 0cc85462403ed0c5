/**
 * The browser dashboard (docs/dashboard.md) in a real browser: Debian's Chromium driven by
 * playwright-core against `fleetgw serve` with `fleetgw sim` robots and a user made by
 * `fleetgw admin create-user`. Logs in, sees the robots move on the map, stops one and sees the
 * command's delivery state and the robot holding still, acknowledges an alert, opens a robot page,
 * logs out and sees the stream close. Throughout, it checks that no API key or robot token is in
 * anything the page loads, that stream tickets travel only inside a WebSocket message (never in a
 * URL), and that the page's CSP reported no violation. Screenshots go to test-artifacts/dashboard/.
 *
 * Chromium comes from Debian (`apt-get install chromium`: .ci/run and scripts/test.mjs install it);
 * without /usr/bin/chromium this test fails under CI=true and is skipped otherwise.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEETGW_BIN, adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { startSim } from '../support/stream-client.js';
import { sleep, until } from '../support/until.js';


const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'dashboard');
const EMAIL = 'operator@acme.test';
const PASSWORD = `dash-${Math.random().toString(36).slice(2)}-pw`;
const ROBOTS = 3;

const d = makeDataDir('fleetgw-dashboard-');
let gw: RunningGateway;
let sim: ChildProcess;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const robots: { robotId: string; robotToken: string }[] = [];

/** What the page did, recorded from the browser's side. */
const seen = {
  urls: [] as string[],
  wsUrls: [] as string[],
  wsSent: [] as string[],
  wsClosed: 0,
  tickets: [] as string[],
  bodies: [] as string[],
  /** Response bodies still being read into `bodies`. */
  bodyReads: [] as Promise<unknown>[],
  cspViolations: [] as string[],
};

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** A raw GET (node:http, not fetch: fetch would decompress and hide the encoding the gateway chose). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The drawn position of every robot marker, by robot id. */
async function markers(): Promise<Map<string, [number, number]>> {
  // getAttribute: the test's own types have no DOM (tsconfig lib ES2023), and the element is an SVG path.
  const list = await page.$$eval('path.robot-marker[data-lat]', (els) =>
    els.map((e) => [e.getAttribute('data-robot-id') ?? '', Number(e.getAttribute('data-lat')), Number(e.getAttribute('data-lon'))] as const),
  );
  return new Map(list.map(([id, lat, lon]) => [id, [lat, lon]]));
}

const MISSION_ROBOT = 2;
let runFeatureId = '';

/**
 * With the all-permission key: a feature and a speed-limit field rule near the simulated depot
 * (52.0 N, 5.0 E) for the map, and a mission (one long wait step) deployed to one robot, for pause
 * and resume from the page.
 */
async function fleetContent(): Promise<void> {
  const base = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
  const post = async (path: string, body: unknown, idem = false): Promise<any> => {
    const r = await api(gw.ready.http, d.apiKey, path, { method: 'POST', body: JSON.stringify(body), headers: idem ? { 'idempotency-key': randomUUID() } : {} });
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const square = (lon: number, lat: number, m: number) => {
    const dLat = m / 111_320;
    const dLon = m / (111_320 * Math.cos((lat * Math.PI) / 180));
    return { type: 'Polygon', coordinates: [[[lon, lat], [lon + dLon, lat], [lon + dLon, lat + dLat], [lon, lat + dLat], [lon, lat]]] };
  };
  runFeatureId = (await post(`${base}/features`, { name: 'north yard', geometry: square(5.0, 52.0, 40) }, true)).featureId as string;
  await post('/v1/agent/upsert-field-rule', { org_id: d.orgId, fleet_id: d.fleetId, field_rule: { name: 'slow lane', type: 'speed_limit', geometry: square(4.9995, 51.9995, 15), parameters: { max_speed_mps: 1.0 } } });
  const t = await post(`${base}/mission-templates`, { name: 'long wait', featureId: runFeatureId, steps: [{ kind: 'wait', config: { seconds: 600 } }] }, true);
  // Runs are dispatched only while the fleet's operation runs.
  await post('/v1/agent/control-operation', { org_id: d.orgId, fleet_id: d.fleetId, action: 'start' });
  await post('/v1/agent/deploy-mission', { org_id: d.orgId, fleet_id: d.fleetId, mission_id: t.missionId, robot_ids: [robots[MISSION_ROBOT]!.robotId] }, true);
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  for (let i = 0; i < ROBOTS; i++) robots.push(adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `rover-${i + 1}`]));
  const user = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'create-user', '--data-dir', d.dataDir, '--org', d.orgId, '--email', EMAIL, '--role', 'operator', '--json'], {
    input: `${PASSWORD}\n`,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (user.status !== 0) throw new Error(`create-user failed: ${user.stderr}`);
  // Every simulated battery (60-100 %) is below 100 %: each robot opens a battery_low alert.
  gw = await startGatewayProcess(d.dataDir, ['--insecure-http'], { FLEETGW_ALERT_BATTERY_LOW_PCT: '100', FLEETGW_ALERT_BATTERY_CLEAR_PCT: '100' });
  sim = await startSim(d.dataDir, gw.ready.grpc, robots, 10);
  await fleetContent();
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.on('request', (r) => seen.urls.push(r.url()));
  page.on('response', (r) => {
    const type = r.headers()['content-type'] ?? '';
    if (!/json|javascript|html|css/.test(type)) return;
    const url = r.url();
    seen.bodyReads.push(r.text().then(
      (text) => {
        seen.bodies.push(text);
        if (url.endsWith('/v1/telemetry/stream-tickets')) seen.tickets.push((JSON.parse(text) as { ticket: string }).ticket);
      },
      () => undefined,
    ));
  });
  page.on('websocket', (ws) => {
    seen.wsUrls.push(ws.url());
    ws.on('framesent', (f) => seen.wsSent.push(String(f.payload)));
    ws.on('close', () => seen.wsClosed++);
  });
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) seen.cspViolations.push(m.text());
  });
}, 120_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  if (sim && sim.exitCode === null && sim.signalCode === null) sim.kill('SIGKILL');
  await gw?.stop();
  rmSync(d.dataDir, { recursive: true, force: true });
});

describe.skipIf(!HAVE_CHROMIUM)('dashboard in Chromium', () => {
  it('log in, robots move, stop one, acknowledge an alert, pause/resume a mission, robot page, stop all, log out (or a revoked session) ends the stream; no secret in the page', async () => {
    try {
      await walkThrough();
    } catch (err) {
      await shot('failure').catch(() => undefined);
      throw err;
    }
  }, 150_000);
});

async function walkThrough(): Promise<void> {
  /** Values that must appear in nothing the page loaded and in no URL. */
  const secrets: string[] = [];
  {
    const base = gw.ready.http;
    const first = await page.goto(`${base}/`);
    expect(first?.status()).toBe(200);
    const csp = first?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');

    // The bundle: served by the gateway with an ETag (304 on revalidation) and compressed.
    const js = await rawGet(`${base}/app/app.js`, { 'accept-encoding': 'br, gzip' });
    expect(js.status).toBe(200);
    expect(js.headers['content-encoding']).toBe('br');
    expect(js.headers['content-security-policy']).toBe(csp);
    const etag = String(js.headers.etag);
    expect((await rawGet(`${base}/app/app.js`, { 'if-none-match': etag })).status).toBe(304);
    expect((await rawGet(`${base}/app/nope.js`, {})).status).toBe(404);

    // Log in.
    await page.fill('#login-email', EMAIL);
    await page.fill('#login-password', 'not the password');
    await page.click('form.login button[type=submit]');
    await page.waitForSelector('form.login p[role=alert]:has-text("Wrong email or password")');
    await page.fill('#login-password', PASSWORD);
    await page.click('form.login button[type=submit]');
    await page.waitForSelector('.stream-state[data-state="live"]', { timeout: 30_000 });
    await page.waitForSelector(`header.top .user:has-text("${EMAIL}")`);
    // The session cookie is HttpOnly: the page's script cannot read it.
    const cookie = (await context.cookies()).find((c) => c.name === 'fleetgw_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');
    expect(String(await page.evaluate('document.cookie'))).not.toContain(cookie!.value);
    secrets.push(cookie!.value);

    // Robots move on the map: every marker drawn, and they change position between two reads.
    await until(async () => (await markers()).size === ROBOTS, 30_000, 'a marker per robot', 250);
    const before = await markers();
    await until(
      async () => {
        const now = await markers();
        return [...before].filter(([id, p]) => { const q = now.get(id); return q !== undefined && (q[0] !== p[0] || q[1] !== p[1]); }).length >= 2;
      },
      30_000,
      'robots moving on the map',
      250,
    );
    await shot('1-map-moving');

    // Stop one robot from its row: the delivery state shows the robot's acknowledgement, and it holds still.
    const target = robots[0]!.robotId;
    await page.click(`tr.robot-row[data-robot-id="${target}"] button[data-action="stop"]`);
    await page.waitForSelector(`tr.command-row[data-robot-id="${target}"]`);
    await page.waitForSelector(`tr.command-row[data-robot-id="${target}"][data-state="agent_received"]`, { timeout: 30_000 });
    await page.waitForSelector(`tr.robot-row[data-robot-id="${target}"][data-mode="paused"][data-speed="0"]`, { timeout: 30_000 });
    // The others keep driving; their markers moving means the page drew later telemetry of every
    // robot (one stream, all robots at the same rate), and the stopped one held still through it.
    const others = await markers();
    const held = others.get(target);
    await until(
      async () => {
        const now = await markers();
        return robots.slice(1).some((r) => { const p = others.get(r.robotId)!; const q = now.get(r.robotId)!; return q[0] !== p[0] || q[1] !== p[1]; });
      },
      15_000,
      'the other robots still moving',
      250,
    );
    expect((await markers()).get(target)).toEqual(held);
    await shot('2-robot-stopped');

    // Acknowledge an alert: the page shows it acknowledged, and the gateway recorded the user's session.
    const alertSel = '.alert-item[data-kind="battery_low"][data-state="open"]';
    await page.waitForSelector(alertSel, { timeout: 30_000 });
    const alertId = await page.getAttribute(alertSel, 'data-alert-id');
    await page.click(`.alert-item[data-alert-id="${alertId}"] button[data-action="acknowledge"]`);
    await page.waitForSelector(`.alert-item[data-alert-id="${alertId}"][data-state="acknowledged"]`);
    const acked = await api(base, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/alerts/${alertId}`);
    expect(acked.body).toMatchObject({ state: 'acknowledged', acknowledgedBy: { actorType: 'user' } });
    await shot('3-alert-acknowledged');

    // The map draws the fleet's feature and field rule.
    await page.waitForSelector('path.map-feature', { state: 'attached', timeout: 30_000 });
    await page.waitForSelector('path.map-field-rule', { state: 'attached' });

    // Pause and resume the mission from its run row; each command's delivery state; the run's timeline.
    const mRobot = robots[MISSION_ROBOT]!.robotId;
    await page.click('tr.run-row[data-state="running"] button[data-action="pause"]', { timeout: 40_000 });
    await page.waitForSelector(`tr.command-row[data-action="mission pause"][data-robot-id="${mRobot}"][data-state="agent_received"]`, { timeout: 30_000 });
    await page.click('tr.run-row[data-state="paused"] button[data-action="resume"]', { timeout: 30_000 });
    await page.waitForSelector(`tr.command-row[data-action="mission resume"][data-robot-id="${mRobot}"][data-state="agent_received"]`, { timeout: 30_000 });
    await page.waitForSelector('tr.run-row[data-state="running"]', { timeout: 30_000 });
    await page.click('tr.run-row button.link');
    await page.waitForSelector('.timeline li.event', { timeout: 15_000 });
    await shot('4-mission-timeline');

    // The robot page: its live state, charts of its history and its position trail on the map.
    await page.click(`tr.robot-row[data-robot-id="${robots[1]!.robotId}"] button.link`);
    await page.waitForSelector('.robot-page:not([hidden]) dl');
    await page.waitForSelector('.history-status[data-state]', { timeout: 30_000 });
    expect(await page.textContent('.history-status')).not.toContain('could not');
    expect(await page.getAttribute('.history-status', 'data-state')).toBe('ok');
    await page.waitForSelector('.chart[data-field="batteryPct"] canvas');
    await page.waitForSelector('.chart[data-field="speedMps"] canvas');
    await page.waitForSelector('path.robot-trail');
    // The MCAP export link downloads with the session cookie (its URL holds no credential).
    const exportHref = (await page.getAttribute('.robot-page a.export', 'href')) ?? '';
    expect(exportHref).toMatch(/^\/v1\/robots\/[0-9a-f-]+\/telemetry\/export\.mcap\?from_ms=\d+&to_ms=\d+$/);
    let mcap = { status: 0, bytes: 0, text: '' };
    // A loaded store may answer 503 for a moment (docs/telemetry-history.md): asked again, not failed.
    await until(
      async () => {
        mcap = await page.evaluate(async (href) => {
          const r = await fetch(href);
          const bytes = await r.arrayBuffer();
          return { status: r.status, bytes: bytes.byteLength, text: r.status === 200 ? '' : new TextDecoder().decode(bytes).slice(0, 300) };
        }, exportHref);
        return mcap.status !== 503;
      },
      30_000,
      'an MCAP export the store answers',
      1_000,
    );
    expect(mcap.status, mcap.text).toBe(200);
    expect(mcap.bytes).toBeGreaterThan(100);
    expect(Number(await page.getAttribute('.history-status', 'data-points'))).toBeGreaterThan(0);
    await shot('5-robot-page');

    // Stop all, after a confirmation: every robot's stop is acknowledged.
    await page.click('button[data-action="stop-all"]');
    await page.click('dialog.confirm button[data-action="confirm-stop-all"]');
    await until(async () => (await page.$$('tr.command-row[data-action="stop all"][data-state="agent_received"]')).length === ROBOTS, 30_000, 'every stop of stop-all acknowledged', 200);
    await shot('6-stopped-all');

    // Log out: the socket closes, the login form is back, the cookie no longer works.
    const closedBefore = seen.wsClosed;
    await page.click('button[data-action="logout"]');
    await page.waitForSelector('form.login');
    await until(() => seen.wsClosed > closedBefore, 10_000, 'the stream closed at logout', 50);
    const after = await page.evaluate(async () => (await fetch('/v1/sessions/current')).status);
    expect(after).toBe(401);
    await shot('7-logged-out');

    // A session ended elsewhere (`fleetgw admin revoke-sessions`): the gateway closes the stream, and
    // the page goes back to its login form instead of asking for new tickets.
    await page.fill('#login-email', EMAIL);
    await page.fill('#login-password', PASSWORD);
    await page.click('form.login button[type=submit]');
    await page.waitForSelector('.stream-state[data-state="live"]', { timeout: 30_000 });
    const closedLive = seen.wsClosed;
    const revoke = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'revoke-sessions', '--data-dir', d.dataDir, '--email', EMAIL, '--json'], { encoding: 'utf8', timeout: 30_000 });
    expect(revoke.status, revoke.stderr).toBe(0);
    await until(() => seen.wsClosed > closedLive, 10_000, 'the gateway closed the stream of the revoked session', 50);
    await page.waitForSelector('form.login', { timeout: 10_000 });
    const wsAfterRevoke = seen.wsUrls.length;
    // Time-based on purpose: longer than the dashboard's stream reconnect delay (2 s), and none came.
    await sleep(3_000);
    expect(seen.wsUrls.length, 'no new stream after the session ended').toBe(wsAfterRevoke);

    // No secret in what the page loaded, no ticket in any URL; tickets went in the subscribe message.
    await Promise.all(seen.bodyReads);
    secrets.push(d.apiKey, ...robots.map((r) => r.robotToken));
    const everything = [...seen.bodies, await page.content(), ...seen.urls, ...seen.wsUrls].join('\n');
    for (const s of secrets) expect(everything.includes(s), 'an API key, robot token or session cookie in the page or a URL').toBe(false);
    expect(seen.tickets.length).toBeGreaterThan(0);
    for (const t of seen.tickets) {
      for (const u of [...seen.urls, ...seen.wsUrls]) expect(u.includes(t), `ticket in ${u}`).toBe(false);
      expect(seen.wsSent.some((f) => f.includes(t))).toBe(true);
    }
    expect(seen.wsUrls.every((u) => new URL(u).search === '')).toBe(true);
    expect(seen.cspViolations).toEqual([]);
  }
}
