/**
 * The dashboard at a phone's (390 px), a tablet's (768 px) and a desktop's (1440 px) width, in
 * Debian's Chromium through playwright-core, against `fleetgw serve` and `fleetgw sim`:
 * - no horizontal overflow (the document is as wide as the viewport), every control's box inside the
 *   viewport when scrolled to, 44 px controls on touch screens, the map at least 40 % of the height,
 *   the robot page in view when opened from a scrolled list, no console error, no CSP violation, and
 *   axe-core finds no WCAG 2.1 A/AA violation;
 * - an admin adds and disables a user and creates (secret shown once) and revokes an API key;
 * - the time slider replays positions and the alerts open at its time (an e-stop pressed and released);
 * - after a gateway crash every robot has paused itself (stop on link loss): Start all, confirmed,
 *   brings every one back, with each command's delivery state shown in the fleet bar.
 * Screenshots of each size go to test-artifacts/dashboard/.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { crc32, deflateSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HAVE_CHROMIUM, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEETGW_BIN, adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';


const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'dashboard');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const EMAIL = 'admin@acme.test';
const PASSWORD = `dash-${Math.random().toString(36).slice(2)}-pw`;
const ROBOTS = 3;
const LINK_LOSS_MS = 1000;

const SCREENS = [
  { name: 'phone', width: 390, height: 844, touch: true },
  { name: 'tablet', width: 768, height: 1024, touch: true },
  { name: 'desktop', width: 1440, height: 900, touch: false },
] as const;

const d = makeDataDir('fleetgw-dash-screens-');
const ports = { http: 0, grpc: 0 };
let gw: RunningGateway;
let sim: ChildProcess;
let simLines: string[] = [];
let browser: Browser;
const robots: { robotId: string; robotToken: string }[] = [];
/** Console errors, page errors and CSP reports of every page, with the page's name. */
const problems: string[] = [];

async function startGateway(): Promise<RunningGateway> {
  return startGatewayProcess(d.dataDir, ['--insecure-http', '--port', String(ports.http), '--grpc-port', String(ports.grpc)]);
}

/** `fleetgw sim` with a short link-loss pause, its log lines kept (each robot says when it paused itself). */
async function startSimulator(): Promise<ChildProcess> {
  const file = join(d.dataDir, 'sim-robots.json');
  writeFileSync(file, JSON.stringify(robots), { mode: 0o600 });
  const p = spawn(process.execPath, [FLEETGW_BIN, 'sim', '--grpc', gw.ready.grpc, '--robots-file', file, '--hz', '5', '--stop-on-link-loss-ms', String(LINK_LOSS_MS)], { stdio: ['ignore', 'pipe', 'pipe'] });
  createInterface({ input: p.stderr }).on('line', (l) => simLines.push(l));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: p.stdout }).once('line', () => resolve());
    p.once('exit', (code) => reject(new Error(`fleetgw sim exited with ${String(code)}`)));
  });
  return p;
}

/** A feature and a field rule near the simulated depot (52.0 N, 5.0 E): the map has shapes to draw. */
async function fleetContent(): Promise<void> {
  const square = (lon: number, lat: number, m: number) => {
    const dLat = m / 111_320;
    const dLon = m / (111_320 * Math.cos((lat * Math.PI) / 180));
    return { type: 'Polygon', coordinates: [[[lon, lat], [lon + dLon, lat], [lon + dLon, lat + dLat], [lon, lat + dLat], [lon, lat]]] };
  };
  const f = await api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/features`, { method: 'POST', body: JSON.stringify({ name: 'north yard', geometry: square(5.0, 52.0, 40) }), headers: { 'idempotency-key': randomUUID() } });
  expect(f.status).toBe(201);
  const r = await api(gw.ready.http, d.apiKey, '/v1/agent/upsert-field-rule', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, field_rule: { name: 'slow lane', type: 'speed_limit', geometry: square(4.9995, 51.9995, 15), parameters: { max_speed_mps: 1.0 } } }) });
  expect(r.status).toBeLessThan(300);
}

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  for (let i = 0; i < ROBOTS; i++) robots.push(adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `rover-with-a-long-name-${i + 1}`]));
  const user = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'create-user', '--data-dir', d.dataDir, '--org', d.orgId, '--email', EMAIL, '--role', 'admin', '--json'], { input: `${PASSWORD}\n`, encoding: 'utf8', timeout: 30_000 });
  if (user.status !== 0) throw new Error(`create-user failed: ${user.stderr}`);
  ports.http = await freePort();
  ports.grpc = await freePort();
  gw = await startGateway();
  sim = await startSimulator();
  await fleetContent();
  // A placed floor plan from the start: every screen size is checked with its panel and image shown.
  const s = await adminSession();
  const put = await fetch(`${gw.ready.http}/v1/orgs/${d.orgId}/fleets/${d.fleetId}/floor-plan`, {
    method: 'PUT',
    headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ content_type: 'image/png', data_base64: png(300, 200).toString('base64'), placement: [{ x: 0, y: 0, lat: 52.0004, lon: 4.9994 }, { x: 300, y: 200, lat: 51.9996, lon: 5.0008 }] }),
  });
  expect(put.status).toBe(200);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  if (sim && sim.exitCode === null && sim.signalCode === null) sim.kill('SIGKILL');
  await gw?.stop();
  rmSync(d.dataDir, { recursive: true, force: true });
});

/** A logged-in page at one screen size, its console errors and CSP reports recorded. */
async function loggedIn(screen: (typeof SCREENS)[number]): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: screen.width, height: screen.height }, hasTouch: screen.touch, isMobile: screen.touch && screen.width < 700 });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.on('console', (m) => {
    // Before the login form the page asks whether a session exists: that 401 is the expected answer.
    if (m.type() === 'error' && m.location().url.endsWith('/v1/sessions/current') && m.text().includes('401')) return;
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(`${screen.name}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`${screen.name}: ${e.message}`));
  await page.goto(`${gw.ready.http}/`);
  await page.fill('#login-email', EMAIL);
  await page.fill('#login-password', PASSWORD);
  await page.click('form.login button[type=submit]');
  await page.waitForSelector('.stream-state[data-state="live"]', { timeout: 30_000 });
  await until(async () => (await page.$$('path.robot-marker[data-lat]')).length === ROBOTS, 30_000, 'a marker per robot', 250);
  await page.waitForSelector('tr.user-row');
  return { context, page };
}

interface LayoutReport {
  docWidth: number;
  viewport: { w: number; h: number };
  mapHeight: number;
  outside: string[];
  small: string[];
}

/**
 * Scrolls every visible control into view and reports those whose box is not wholly inside the
 * viewport, and (on touch screens) those smaller than 44 px. Runs in the page: one synchronous pass.
 */
function layoutReport(page: Page, touch: boolean): Promise<LayoutReport> {
  return page.evaluate((touchScreen) => {
    const doc = (globalThis as any).document;
    const win = globalThis as any;
    const w = doc.documentElement.clientWidth as number;
    const h = win.innerHeight as number;
    const outside: string[] = [];
    const small: string[] = [];
    const controls = [...doc.querySelectorAll('button, select, input, summary, a[href]')] as any[];
    const label = (el: any): string => `${el.tagName.toLowerCase()}${el.dataset?.action ? `[${el.dataset.action}]` : ''} "${String(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40)}"`;
    for (const el of controls) {
      const r0 = el.getBoundingClientRect();
      if (r0.width === 0 && r0.height === 0) continue;
      if (el.closest('.leaflet-control-attribution')) continue;
      el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      const r = el.getBoundingClientRect();
      if (r.left < -0.5 || r.top < -0.5 || r.right > w + 0.5 || r.bottom > h + 0.5) outside.push(`${label(el)} at ${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)}`);
      const checkbox = el.tagName === 'INPUT' && el.type === 'checkbox';
      if (touchScreen && !checkbox && (r.width < 43.5 || r.height < 43.5)) small.push(`${label(el)} ${Math.round(r.width)}x${Math.round(r.height)}`);
    }
    win.scrollTo(0, 0);
    return {
      docWidth: Math.max(doc.documentElement.scrollWidth, doc.body.scrollWidth),
      viewport: { w, h },
      mapHeight: doc.querySelector('#map').getBoundingClientRect().height,
      outside,
      small,
    };
  }, touch);
}

/** axe-core's WCAG 2.0/2.1 A and AA rules on the page as it is. */
async function axeViolations(page: Page): Promise<string[]> {
  // Through the DevTools protocol (page.evaluate), which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(() =>
    (globalThis as any).axe.run((globalThis as any).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }),
  );
  return (result.violations as { id: string; nodes: { target: string[] }[] }[]).map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', ')}`);
}

/** Where the robot page lands when a robot is opened from the list after scrolling to the list's end. */
async function robotPageTopAfterScroll(page: Page): Promise<{ top: number; bottom: number; height: number }> {
  await page.evaluate(() => {
    const doc = (globalThis as any).document;
    doc.querySelector('.side').scrollTop = 1e6;
    (globalThis as any).scrollTo(0, 1e6);
  });
  const name = page.locator('tr.robot-row button.link').last();
  await name.scrollIntoViewIfNeeded();
  await name.click();
  await page.waitForSelector('.robot-page:not([hidden]) dl');
  return page.evaluate(() => {
    const r = (globalThis as any).document.querySelector('.robot-page').getBoundingClientRect();
    return { top: r.top as number, bottom: r.bottom as number, height: (globalThis as any).innerHeight as number };
  });
}

/** A `w` x `h` PNG (8-bit grey, a frame and a diagonal), made here: the test ships no image file. */
function png(w: number, h: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const rows = Buffer.alloc((w + 1) * h, 0xff);
  for (let y = 0; y < h; y++) {
    rows[y * (w + 1)] = 0; // filter: none
    for (let x = 0; x < w; x++) if (x === 0 || y === 0 || x === w - 1 || y === h - 1 || x === Math.round((y * w) / h)) rows[y * (w + 1) + 1 + x] = 0x40;
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** A session of the admin for REST calls from the test: its cookie and CSRF token. */
async function adminSession(): Promise<{ cookie: string; csrf: string }> {
  const r = await fetch(`${gw.ready.http}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
  expect(r.status).toBe(201);
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { cookie, csrf: ((await r.json()) as { csrfToken: string }).csrfToken };
}

/** Moves the time slider to `ms` (to the second) as a person dragging it does. */
async function seek(page: Page, ms: number): Promise<void> {
  await page.$eval(
    '#replay-slider',
    (e, v) => {
      const input = e as unknown as { value: string; dispatchEvent(ev: unknown): void };
      input.value = String(v);
      input.dispatchEvent(new (globalThis as any).Event('input'));
    },
    Math.round((ms - Number(await page.getAttribute('#replay-slider', 'data-day-start'))) / 1000),
  );
}

describe.skipIf(!HAVE_CHROMIUM)('dashboard at phone, tablet and desktop sizes', () => {
  let desktop: { context: BrowserContext; page: Page } | undefined;
  const desktopPage = async (): Promise<{ context: BrowserContext; page: Page }> => (desktop ??= await loggedIn(SCREENS[2]));

  it.each(SCREENS)('$name ($width px): fits the viewport, every control reachable, the robot page opens in view, axe finds nothing', async (screen) => {
    const { context, page } = await loggedIn(screen);
    try {
      await page.waitForSelector('path.map-field-rule', { state: 'attached' });
      await page.waitForSelector('img.floor-plan', { state: 'attached' });
      await page.waitForSelector('.placement input[data-field="lat"]');
      await page.waitForSelector(`.fleet-bar [data-count="online"][data-value="${ROBOTS}"]`, { timeout: 10_000 });
      const report = await layoutReport(page, screen.touch);
      expect(report.docWidth, 'the document is as wide as the viewport').toBe(report.viewport.w);
      expect(report.viewport.w).toBe(screen.width);
      expect(report.outside, 'controls outside the viewport when scrolled to').toEqual([]);
      expect(report.small, 'controls under 44 px on a touch screen').toEqual([]);
      expect(report.mapHeight, 'the map takes at least 40 % of the height').toBeGreaterThanOrEqual(0.4 * report.viewport.h);
      await page.screenshot({ path: join(ARTIFACTS, `screen-${screen.name}.png`) });

      const placed = await robotPageTopAfterScroll(page);
      expect(placed.top, 'the robot page opens in view').toBeGreaterThanOrEqual(0);
      expect(placed.top).toBeLessThan(placed.height);
      await page.waitForSelector('.chart[data-field="batteryPct"] canvas', { timeout: 30_000 });
      const withRobot = await layoutReport(page, screen.touch);
      expect(withRobot.docWidth, 'no overflow with the robot page open').toBe(withRobot.viewport.w);
      expect(withRobot.outside).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, `screen-${screen.name}-robot.png`) });

      expect(await axeViolations(page), 'axe-core WCAG A/AA violations').toEqual([]);
      expect(problems).toEqual([]);
    } catch (err) {
      await page.screenshot({ path: join(ARTIFACTS, `failure-${screen.name}.png`), fullPage: true }).catch(() => undefined);
      throw err;
    } finally {
      if (screen.name === 'desktop') desktop = { context, page };
      else await context.close();
    }
  }, 150_000);

  it('an admin adds and disables a user, creates an API key (secret shown once) and revokes it', async () => {
    const { page } = await desktopPage();
    const base = gw.ready.http;
    const login = async (email: string, password: string) =>
      (await fetch(`${base}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) })).status;

    const newEmail = 'viewer@acme.test';
    const newPassword = `new-${randomUUID()}`;
    await page.fill('#new-user-email', newEmail);
    await page.selectOption('#new-user-role', 'viewer');
    await page.fill('#new-user-password', newPassword);
    await page.click('button[data-action="add-user"]');
    const row = `tr.user-row[data-email="${newEmail}"]`;
    await page.waitForSelector(`${row}[data-state="active"]`);
    expect(await login(newEmail, newPassword)).toBe(201);
    await page.click(`${row} button[data-action="disable-user"]`);
    await page.waitForSelector(`${row}[data-state="disabled"]`, { timeout: 10_000 }).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; the panel says: ${await page.textContent('.admin-message')}`);
    });
    expect(await login(newEmail, newPassword)).toBe(401);

    await page.fill('#new-key-name', 'line scanner');
    await page.click('button[data-action="create-key"]');
    await page.waitForSelector('.secret-once code.new-secret');
    const secret = (await page.textContent('.secret-once code.new-secret')) ?? '';
    expect(secret).toMatch(/^fgk_/);
    expect((await api(base, secret, '/v1/me')).status).toBe(200);
    const keyRow = 'tr.key-row[data-name="line scanner"]';
    await page.waitForSelector(`${keyRow}[data-state="active"]`);
    // Shown once: the next redraw of the panel (here: the revoke) no longer has it.
    await page.click(`${keyRow} button[data-action="revoke-key"]`);
    await page.waitForSelector(`${keyRow}[data-state="revoked"]`);
    expect(await page.$('.secret-once')).toBeNull();
    expect((await page.content()).includes(secret)).toBe(false);
    // A revoked key is refused within a second (docs/sessions.md: the key cache's bound).
    await until(async () => (await api(base, secret, '/v1/me')).status === 401, 10_000, 'the revoked key refused', 100);
    expect(problems).toEqual([]);
  }, 60_000);

  it('an admin uploads a floor plan and places it by two points; the image has an ETag (304), bounds (413) and a checked type (415)', async () => {
    const { page } = await desktopPage();
    const base = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/floor-plan`;
    const image = png(200, 100);
    // The plan set up at the start goes first: the map then has none.
    await page.waitForSelector('img.floor-plan', { state: 'attached' });
    await page.click('button[data-action="remove-floor-plan"]');
    await page.waitForSelector('img.floor-plan', { state: 'detached' });
    await page.setInputFiles('#floor-plan-file', { name: 'depot.png', mimeType: 'image/png', buffer: image });
    await page.waitForSelector('.floor-plan-panel [data-placed="0"]');
    const p1 = { x: 0, y: 0, lat: 52.0006, lon: 4.9992 };
    const p2 = { x: 200, y: 100, lat: 51.9994, lon: 5.0012 };
    for (const [i, p] of [p1, p2].entries()) {
      for (const k of ['x', 'y', 'lat', 'lon'] as const) await page.fill(`.placement input[data-point="${i}"][data-field="${k}"]`, String(p[k]));
    }
    await page.click('button[data-action="place-floor-plan"]');
    await page.waitForSelector('.floor-plan-panel [data-placed="2"]');
    // Drawn on the map, loaded (no CSP refusal), its corners where the two points put them.
    await page.waitForSelector('img.floor-plan', { state: 'attached' });
    await until(async () => (await page.$eval('img.floor-plan', (e) => (e as unknown as { naturalWidth: number }).naturalWidth)) === 200, 15_000, 'the floor plan image loaded', 100);
    const corners = JSON.parse((await page.getAttribute('img.floor-plan', 'data-corners')) ?? '{}') as { topLeft: number[]; topRight: number[]; bottomLeft: number[] };
    expect(corners.topLeft[0]).toBeCloseTo(p1.lat, 7);
    expect(corners.topLeft[1]).toBeCloseTo(p1.lon, 7);
    // Two points fix a similarity: the bottom-right corner (pixel 200,100) is the second point.
    expect(corners.topRight[0]! + corners.bottomLeft[0]! - corners.topLeft[0]!).toBeCloseTo(p2.lat, 6);
    expect(corners.topRight[1]! + corners.bottomLeft[1]! - corners.topLeft[1]!).toBeCloseTo(p2.lon, 6);
    await page.screenshot({ path: join(ARTIFACTS, 'floor-plan.png') });

    const s = await adminSession();
    const http = gw.ready.http;
    const img = await fetch(`${http}${base}/image`, { headers: { cookie: s.cookie } });
    expect(img.status).toBe(200);
    expect(img.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await img.arrayBuffer()).equals(image)).toBe(true);
    const etag = img.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"sha256-/);
    expect((await fetch(`${http}${base}/image`, { headers: { cookie: s.cookie, 'if-none-match': etag } })).status).toBe(304);
    const put = (body: unknown) => fetch(`${http}${base}`, { method: 'PUT', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const tooBig = await put({ content_type: 'image/png', data_base64: Buffer.alloc(800 * 1024).toString('base64') });
    expect(tooBig.status).toBe(413);
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#ccc"/></svg>';
    const notPng = await put({ content_type: 'image/png', data_base64: Buffer.from(svg).toString('base64') });
    expect(notPng.status).toBe(415);
    // An API key (not an admin's session) cannot change it.
    expect((await api(http, d.apiKey, base, { method: 'PUT', body: JSON.stringify({ content_type: 'image/svg+xml', data_base64: Buffer.from(svg).toString('base64') }) })).status).toBe(403);
    // An SVG is served as an image only: a CSP that runs nothing, never sniffed.
    expect((await put({ content_type: 'image/svg+xml', data_base64: Buffer.from(svg).toString('base64') })).status).toBe(200);
    const svgImg = await fetch(`${http}${base}/image`, { headers: { cookie: s.cookie } });
    expect(svgImg.headers.get('content-type')).toBe('image/svg+xml');
    expect(svgImg.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(svgImg.headers.get('content-security-policy')).toContain('sandbox');
    expect(svgImg.headers.get('x-content-type-options')).toBe('nosniff');
    expect(svgImg.headers.get('etag')).not.toBe(etag);
    // The placement stays with the new image; the page redraws it after a reload of the plan.
    const meta = await api(http, d.apiKey, base);
    expect(meta.body.plan).toMatchObject({ contentType: 'image/svg+xml', widthPx: 40, heightPx: 20, placement: [p1, p2] });
    expect(problems).toEqual([]);
  }, 60_000);

  it('the time slider shows, for its time, each robot where the history API says it was and the alerts open then; Live returns to the stream', async () => {
    const { page } = await desktopPage();
    // A time when every robot had reported for a few seconds, and at least 15 s ago (the store writes
    // in batches): what the history API holds for it is settled.
    let firstMs = 0;
    await until(
      async () => {
        const firsts = await Promise.all(robots.map(async (r) => (await api(gw.ready.http, d.apiKey, `/v1/robots/${r.robotId}/telemetry?from_ms=${Date.now() - 3_600_000}&limit=1`)).body.items?.[0]?.tsMs as number | undefined));
        if (firsts.some((t) => t === undefined)) return false;
        firstMs = Math.max(...(firsts as number[]));
        return firstMs + 5_000 < Date.now() - 15_000;
      },
      60_000,
      'every robot with stored history at least 15 s old',
      500,
    );
    const targetMs = Math.max(firstMs + 5_000, Date.now() - 20_000);
    const sliderMax = Number(await page.getAttribute('#replay-slider', 'max'));
    // Live: the slider stands at its end.
    expect(Number(await page.$eval('#replay-slider', (e) => (e as unknown as { value: string }).value))).toBe(sliderMax);
    await seek(page, targetMs);
    await page.waitForSelector('.replay-time[data-mode="replay"]');
    const cursorMs = Number(await page.getAttribute('.replay-time', 'data-time'));
    expect(cursorMs).toBeLessThan(Date.now() - 15_000);
    await until(async () => (await page.$$('path.robot-marker[data-replay-ts]')).length === ROBOTS, 30_000, 'every marker drawn from history', 200);
    for (const r of robots) {
      const h = await api(gw.ready.http, d.apiKey, `/v1/robots/${r.robotId}/telemetry?from_ms=${cursorMs - 10_000}&to_ms=${cursorMs}&limit=2000`);
      expect(h.status).toBe(200);
      const last = (h.body.items as { tsMs: number; latitude: number; longitude: number }[]).filter((x) => x.tsMs <= cursorMs).at(-1)!;
      const sel = `path.robot-marker[data-robot-id="${r.robotId}"]`;
      expect(Number(await page.getAttribute(sel, 'data-replay-ts'))).toBe(last.tsMs);
      expect(Number(await page.getAttribute(sel, 'data-lat'))).toBe(last.latitude);
      expect(Number(await page.getAttribute(sel, 'data-lon'))).toBe(last.longitude);
    }
    await page.screenshot({ path: join(ARTIFACTS, 'replay.png') });

    // Alerts: the e-stop pressed on every robot for a few seconds, then released.
    const alerts = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/alerts`;
    type AlertBody = { alertId: string; robotId: string; openedAtMs: number; resolvedAtMs: number | null };
    const estops = async (q: string): Promise<AlertBody[]> => (await api(gw.ready.http, d.apiKey, `${alerts}?kind=estop&${q}`)).body.items as AlertBody[];
    sim.kill('SIGUSR1');
    await until(async () => (await estops('state=open')).length === ROBOTS, 20_000, 'an open estop alert per robot', 200);
    const opened = await estops('state=open');
    const lastOpenedMs = Math.max(...opened.map((a) => a.openedAtMs));
    const firstOpenedMs = Math.min(...opened.map((a) => a.openedAtMs));
    // Open long enough that a slider second falls well inside every alert's open span.
    await until(() => Date.now() > lastOpenedMs + 4_000, 10_000, 'the alerts open for four seconds', 100);
    sim.kill('SIGUSR2');
    let resolved: AlertBody[] = [];
    await until(async () => (resolved = (await estops('state=resolved')).filter((a) => opened.some((o) => o.alertId === a.alertId))).length === ROBOTS, 20_000, 'every estop alert resolved', 200);
    // A released e-stop holds the robot until started, as on a real robot: start them again.
    for (const r of robots) {
      const started = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'start', robot_id: r.robotId }) });
      expect(started.status).toBeLessThan(300);
    }
    await until(
      async () => ((await api(gw.ready.http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`)).body as { mode: string | null }[]).every((x) => x.mode !== 'paused'),
      30_000,
      'every robot running again after the e-stop',
      250,
    );
    const firstResolvedMs = Math.min(...resolved.map((a) => a.resolvedAtMs!));
    expect(firstResolvedMs - lastOpenedMs).toBeGreaterThan(3_000);
    const whileOpen = Math.round((lastOpenedMs + firstResolvedMs) / 2);
    // The REST filter the page reads.
    expect(await estops(`unresolved_from_ms=${whileOpen}&unresolved_to_ms=${whileOpen}`)).toHaveLength(ROBOTS);
    expect(await estops(`unresolved_from_ms=${firstOpenedMs - 10_000}&unresolved_to_ms=${firstOpenedMs - 1}`)).toHaveLength(0);
    expect(await estops(`unresolved_from_ms=${firstResolvedMs + 60_000}`)).toHaveLength(0);
    const bad = await api(gw.ready.http, d.apiKey, `${alerts}?unresolved_from_ms=2000&unresolved_to_ms=1000`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('unresolved_to_ms');

    await seek(page, whileOpen);
    await until(async () => (await page.$$('.alerts .alert-list.replay li[data-kind="estop"]')).length === ROBOTS, 30_000, 'the replayed alerts in the panel', 200);
    for (const r of robots) {
      expect(await page.getAttribute(`.alerts .alert-list.replay li[data-robot-id="${r.robotId}"]`, 'data-kind')).toBe('estop');
      await until(async () => (await page.getAttribute(`path.robot-marker[data-robot-id="${r.robotId}"]`, 'data-alerts')) === 'estop', 10_000, 'the marker flagged', 100);
    }
    await page.screenshot({ path: join(ARTIFACTS, 'replay-alerts.png') });
    await seek(page, firstOpenedMs - 5_000);
    const beforeMs = Number(await page.getAttribute('.replay-time', 'data-time'));
    expect(beforeMs).toBeLessThan(firstOpenedMs);
    await page.waitForSelector(`.alerts[data-replay-at="${beforeMs}"]`, { timeout: 30_000 }).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; alerts panel: ${await page.textContent('.alerts')}`);
    });
    expect(await page.$$('.alerts .alert-list.replay li[data-kind="estop"]'), await page.textContent('.alerts') ?? '').toHaveLength(0);
    expect(await page.$$('path.robot-marker[data-alerts~="estop"]')).toHaveLength(0);

    await page.click('button[data-action="replay-live"]');
    await page.waitForSelector('.replay-time[data-mode="live"]');
    await until(async () => (await page.$$('path.robot-marker[data-replay-ts]')).length === 0, 10_000, 'markers back to the live stream', 100);
    expect(problems).toEqual([]);
  }, 120_000);

  it('after a gateway crash every robot has paused itself; Start all brings every one back', async () => {
    const { page } = await desktopPage();
    const pausedLines = (): number => simLines.filter((l) => l.includes('paused until started')).length;
    simLines = [];
    // An unplanned loss (a crash): a planned restart (SIGTERM) tells the robots to hold instead
    // (test/e2e/restart-hold.test.ts), so none would pause.
    await gw.stop('SIGKILL');
    await until(() => pausedLines() >= ROBOTS, 30_000, 'every simulated robot paused itself on link loss', 100);
    gw = await startGateway();
    // The page reconnects its stream by itself and sees every robot paused.
    await page.waitForSelector('.stream-state[data-state="live"]', { timeout: 30_000 });
    await page.waitForSelector(`.fleet-bar [data-count="paused"][data-value="${ROBOTS}"]`, { timeout: 30_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'restart-paused.png') });

    await page.click('button[data-action="start-all"]');
    const text = await page.textContent('dialog.confirm.start-all');
    expect(text).toContain(`Start ${ROBOTS} robots`);
    await page.click('dialog.confirm button[data-action="confirm-start-all"]');
    await page.waitForSelector(`.bulk-status[data-action="start all"][data-received="${ROBOTS}"]`, { timeout: 60_000 }).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; fleet bar: ${await page.textContent('.bulk-status')}; commands: ${await page.textContent('.panel.commands')}`);
    });
    await page.waitForSelector('.fleet-bar [data-count="paused"][data-value="0"]', { timeout: 30_000 });
    await until(
      async () => {
        const r = await api(gw.ready.http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`);
        return (r.body as { mode: string | null }[]).every((x) => x.mode !== 'paused');
      },
      30_000,
      'every robot running again over REST',
      250,
    );
    await page.screenshot({ path: join(ARTIFACTS, 'restart-resumed.png') });
    expect(problems.filter((p) => !/Failed to load resource|WebSocket/.test(p))).toEqual([]);
  }, 120_000);
});
