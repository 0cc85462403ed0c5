// Benchmark: the browser dashboard's cost with 10, 100 and 1,000 robots streaming (bench/notes/dashboard.md).
//
//   gateway  `fleetgw serve` (the built dist), robots from `fleetgw sim` at --hz
//   page     Debian's Chromium through playwright-core, logged in as a user, the fleet shown live
// Measured over a window after a warm-up, through the page's DevTools protocol session:
//   busy   the main thread's task time (Performance.getMetrics `TaskDuration`) over wall time
//   fps    requestAnimationFrame callbacks per second (headless Chromium paces them at 60 Hz when idle)
//   samples  stream messages the page received per second (after the stream's max_hz decimation)
//
//   node bench/dashboard-fleet.mjs [--robots 10,100,1000] [--hz 10] [--warmup-s 10] [--window-s 20]
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import { machineInfo, parseArgs, ROOT } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { robots: '10,100,1000', hz: 10, 'warmup-s': 10, 'window-s': 20 });
const log = (s) => process.stderr.write(`${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const BIN = join(ROOT, 'bin', 'fleetgw.js');
const EMAIL = 'bench@fleet.example';
const PASSWORD = `bench-${Math.random().toString(36).slice(2)}-pw`;

async function provision(dataDir, n) {
  const { openStore } = await import('../dist/store/lmdb.js');
  const { addRobot, createFleet, createOrg } = await import('../dist/store/identity.js');
  const { createUser } = await import('../dist/auth/users/users.js');
  const store = openStore(dataDir);
  try {
    const org = createOrg(store, 'bench');
    const fleet = createFleet(store, org.orgId, 'bench');
    const robots = [];
    for (let i = 0; i < n; i++) {
      const r = addRobot(store, { fleetId: fleet.fleetId, name: `bench-${String(i).padStart(4, '0')}`, capabilities: ['stop'], active: true });
      robots.push({ robotId: r.record.robotId, robotToken: r.robotToken });
    }
    await createUser(store, { orgId: org.orgId, email: EMAIL, role: 'operator', password: PASSWORD });
    return { robots };
  } finally {
    await store.close();
  }
}

/** Spawns a fleetgw command and resolves with the process and its first stdout line matching `ready`. */
function start(args, ready) {
  const p = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    createInterface({ input: p.stdout }).on('line', (l) => {
      try {
        const o = JSON.parse(l);
        if (ready(o)) resolve({ p, line: o });
      } catch {
        // not JSON
      }
    });
    p.once('exit', (code) => reject(new Error(`fleetgw ${args[0]} exited with ${code}`)));
  });
}

async function runOne(n) {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-dash-'));
  let gw;
  let sim;
  let browser;
  try {
    const { robots } = await provision(dataDir, n);
    gw = await start(['serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0', '--insecure-http'], (o) => o.event === 'ready');
    const file = join(dataDir, 'robots.json');
    writeFileSync(file, JSON.stringify(robots), { mode: 0o600 });
    sim = await start(['sim', '--grpc', gw.line.grpc, '--robots-file', file, '--hz', String(opts.hz)], (o) => o.event === 'sim-started');
    browser = await chromium.launch({ executablePath: process.env.FLEETGW_TEST_CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    page.setDefaultTimeout(120_000);
    // Count stream messages in the page: a WebSocket frame listener from the protocol side.
    let frames = 0;
    page.on('websocket', (ws) => ws.on('framereceived', () => frames++));
    await page.goto(`${gw.line.http}/`);
    await page.fill('#login-email', EMAIL);
    await page.fill('#login-password', PASSWORD);
    await page.click('form.login button[type=submit]');
    await page.waitForSelector('.stream-state[data-state="live"]');
    // A loaded machine connects a thousand simulated robots slowly: measured once 95 % are online.
    const online = async () => Number(await page.getAttribute('.fleet-bar [data-count="online"]', 'data-value'));
    for (const end = Date.now() + 240_000; (await online()) < 0.95 * n; await sleep(1000)) {
      if (Date.now() > end) throw new Error(`only ${await online()} of ${n} robots online after 240 s`);
    }
    await sleep(opts['warmup-s'] * 1000);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable', { timeDomain: 'threadTicks' });
    const metric = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    await page.evaluate(() => {
      globalThis.__frames = 0;
      const tick = () => {
        globalThis.__frames++;
        globalThis.requestAnimationFrame(tick);
      };
      globalThis.requestAnimationFrame(tick);
    });
    const m0 = await metric();
    const f0 = frames;
    const t0 = performance.now();
    const raf0 = await page.evaluate(() => globalThis.__frames);
    await sleep(opts['window-s'] * 1000);
    const m1 = await metric();
    const raf1 = await page.evaluate(() => globalThis.__frames);
    const wallS = (performance.now() - t0) / 1000;
    const busy = (m1.TaskDuration - m0.TaskDuration) / wallS;
    const result = {
      robots: n,
      online: await online(),
      hz: opts.hz,
      windowS: Number(wallS.toFixed(1)),
      busyShare: Number(busy.toFixed(3)),
      fps: Number(((raf1 - raf0) / wallS).toFixed(1)),
      messagesPerS: Math.round((frames - f0) / wallS),
      scriptShare: Number(((m1.ScriptDuration - m0.ScriptDuration) / wallS).toFixed(3)),
      layoutShare: Number(((m1.LayoutDuration - m0.LayoutDuration + m1.RecalcStyleDuration - m0.RecalcStyleDuration) / wallS).toFixed(3)),
      busyPerRobotMs: Number(((busy * 1000) / n).toFixed(3)),
      jsHeapMiB: Number((m1.JSHeapUsedSize / 1048576).toFixed(1)),
      nodes: m1.Nodes,
    };
    log(JSON.stringify(result));
    return result;
  } finally {
    await browser?.close().catch(() => undefined);
    // The gateway flushes its store on the way out: its data dir is removed once it has exited.
    const exited = (p) => (p === undefined || p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));
    sim?.p.kill('SIGTERM');
    gw?.p.kill('SIGTERM');
    await Promise.all([exited(sim?.p), exited(gw?.p)]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const results = [];
for (const n of String(opts.robots).split(',').map(Number)) results.push(await runOne(n));
const load = spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.trim();
process.stdout.write(`${JSON.stringify({ machine: machineInfo(), loadavg: load, results }, null, 2)}\n`);
