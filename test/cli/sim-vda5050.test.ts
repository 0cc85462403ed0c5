/**
 * `fleetgw sim --vda5050` through the real CLI (dist: `npm run build` first): its usage errors, and its
 * virtual AGVs against a private mosquitto with a password file and a per-robot ACL (the broker side
 * of a gateway on its own): each AGV logs in as its robot id with its token, publishes its state on its
 * own identity's topics, executes an instant action, and the stopped line counts what arrived.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import mqtt from 'mqtt';
import { afterAll, describe, expect, it } from 'vitest';
import { FLEETGW_BIN, fleetgw } from '../support/cli.js';
import { HAVE_MOSQUITTO, startMosquitto, type RunningMosquitto } from '../support/mosquitto.js';
import { until } from '../support/until.js';
import { mosquittoAcl } from '../support/vda-mosquitto.js';

const tmp = mkdtempSync(join(tmpdir(), 'fleetgw-sim-vda-'));
let broker: RunningMosquitto | undefined;
afterAll(async () => {
  await broker?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const robots = [0, 1, 2].map((i) => ({ robotId: randomUUID(), robotToken: `token-${i}-${randomUUID()}`, manufacturer: 'Acme', serialNumber: `SIM-${i}` }));

function robotsFile(name: string, doc: unknown): string {
  const file = join(tmp, name);
  writeFileSync(file, JSON.stringify(doc), { mode: 0o600 });
  return file;
}

/** A JSON-lines robots file: what `fleetgw admin add-robot --vda5050 … --json >> FILE` appends. */
function linesFile(name: string, lines: string[]): string {
  const file = join(tmp, name);
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return file;
}

describe('fleetgw sim --vda5050 usage', () => {
  const good = robotsFile('good.json', robots.map((r) => ({ robotId: r.robotId, robotToken: r.robotToken, vda5050: `${r.manufacturer}/${r.serialNumber}` })));
  it.each([
    [['--robots-file', good], '--mqtt is required'],
    [['--mqtt', 'http://127.0.0.1:1883', '--robots-file', good], '--mqtt must be mqtt://HOST:PORT'],
    [['--mqtt', 'mqtt://127.0.0.1:1883'], '--robots-file is required'],
    [['--mqtt', 'mqtt://127.0.0.1:1883', '--robots-file', good, '--grpc', '127.0.0.1:1'], "Unknown option '--grpc'"],
    [['--mqtt', 'mqtt://127.0.0.1:1883', '--robots-file', robotsFile('no-id.json', [{ robotId: robots[0]!.robotId, robotToken: 'x' }])], 'entry 0 (robot'],
    [['--mqtt', 'mqtt://127.0.0.1:1883', '--robots-file', robotsFile('bad-serial.json', [{ robotId: robots[0]!.robotId, robotToken: 'x', vda5050: 'Acme/bad serial' }])], 'needs vda5050'],
    [['--mqtt', 'mqtt://127.0.0.1:1883', '--robots-file', robotsFile('twice.json', [0, 1].map(() => ({ robotId: randomUUID(), robotToken: 'x', vda5050: 'Acme/S1' })))], 'Acme/S1 is listed twice'],
    [['--mqtt', 'mqtt://127.0.0.1:1883', '--robots-file', good, '--state-ms', '0'], '--state-ms must be a positive integer'],
    [['--mqtt', 'mqtt://127.0.0.1:1883', '--robots-file', linesFile('broken-line.json', ['{"robotId":"x"}', '{"robotToken":"token-leak'])], 'line 2 is not valid JSON'],
  ])('%j: exit 2 naming the problem', (args, message) => {
    const r = fleetgw(['sim', '--vda5050', ...args]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.stderr).not.toContain('token-');
  });

  it('--help prints both forms of sim', () => {
    const r = fleetgw(['sim', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('fleetgw sim --grpc HOST:PORT');
    expect(r.stdout).toContain('fleetgw sim --vda5050 --mqtt mqtt://HOST:PORT --robots-file FILE');
  });
});

describe.skipIf(!HAVE_MOSQUITTO)('fleetgw sim --vda5050 against mosquitto', () => {
  it('each AGV logs in with its robot token, reports state on its own topics, executes an instant action; the stopped line counts it', async () => {
    const masterPassword = randomUUID();
    broker = await startMosquitto({
      users: [{ username: 'fleetgw-master', password: masterPassword }, ...robots.map((r) => ({ username: r.robotId, password: r.robotToken }))],
      acl: mosquittoAcl(robots),
    });
    // JSON lines as `fleetgw admin add-robot --vda5050 … --json >> FILE` writes them.
    const file = linesFile('robots.jsonl', robots.map((r) => JSON.stringify({ robotId: r.robotId, robotToken: r.robotToken, vda5050: { manufacturer: r.manufacturer, serialNumber: r.serialNumber } })));
    const master = mqtt.connect(broker.url, { username: 'fleetgw-master', password: masterPassword, reconnectPeriod: 0 });
    await new Promise<void>((resolve, reject) => {
      master.once('connect', () => resolve());
      master.once('error', reject);
    });
    const states = new Map<string, { paused?: boolean; actionStates: Array<{ actionId: string; actionStatus: string }> }>();
    master.on('message', (topic, payload) => {
      if (topic.endsWith('/state')) states.set(topic.split('/')[3]!, JSON.parse(payload.toString()) as never);
    });
    await master.subscribeAsync('uagv/v2/+/+/state');

    const sim = spawn(process.execPath, [FLEETGW_BIN, 'sim', '--vda5050', '--mqtt', broker.url, '--robots-file', file, '--hz', '2', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    sim.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const lines: Array<Record<string, unknown>> = [];
    createInterface({ input: sim.stdout }).on('line', (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
    const exited = new Promise<number | null>((r) => sim.once('exit', (code) => r(code)));
    try {
      await until(() => lines.some((l) => l.event === 'sim-started'), 30_000, 'the started line');
      expect(lines[0]).toMatchObject({ event: 'sim-started', protocol: 'vda5050', robots: 3, hz: 2, stateMs: 1000 });
      await until(() => robots.every((r) => states.has(r.serialNumber)), 30_000, 'a state from every AGV');

      await master.publishAsync('uagv/v2/Acme/SIM-1/instantActions', JSON.stringify({
        headerId: 1, timestamp: new Date().toISOString(), version: '2.0.0', manufacturer: 'Acme', serialNumber: 'SIM-1',
        instantActions: [{ actionId: 'pause-1', actionType: 'startPause', blockingType: 'HARD' }],
      }));
      await until(() => states.get('SIM-1')?.paused === true && states.get('SIM-1')!.actionStates.some((a) => a.actionId === 'pause-1' && a.actionStatus === 'FINISHED'), 15_000, 'SIM-1 paused');
      expect(states.get('SIM-0')?.paused).toBe(false);
    } finally {
      sim.kill('SIGTERM');
      await master.endAsync();
    }
    expect(await exited).toBe(0);
    expect(lines.at(-1)).toEqual({ event: 'sim-stopped', robots: 3, online: 0, orders: 0, instantActions: 1 });
    for (const r of robots) expect(stderr).not.toContain(r.robotToken);
  }, 90_000);
});
