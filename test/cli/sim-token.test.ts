/**
 * `fleetgw sim` takes a robot token from a file or the environment, so it never appears in the
 * process's argv (issue 8, item 16), through the real CLI (dist: `npm run build` first) against a real
 * `fleetgw serve`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { adminJson, FLEETGW_BIN, fleetgw } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

const tmp = mkdtempSync(join(tmpdir(), 'fleetgw-sim-token-'));
const procs: ChildProcess[] = [];
const gateways: RunningGateway[] = [];
const dataDirs: string[] = [];

afterAll(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  for (const g of gateways) await g.stop('SIGKILL');
  for (const d of [tmp, ...dataDirs]) rmSync(d, { recursive: true, force: true });
});

/** The environment without any robot token the test runner may have. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  if (!('FLEETGW_ROBOT_TOKEN' in extra)) delete env.FLEETGW_ROBOT_TOKEN;
  return env;
}

interface Sim {
  proc: ChildProcess;
  stderr: () => string;
  started: Promise<Record<string, unknown>>;
}

function startSim(args: string[], env: NodeJS.ProcessEnv): Sim {
  const proc = spawn(process.execPath, [FLEETGW_BIN, 'sim', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  procs.push(proc);
  let err = '';
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (d: string) => {
    err += d;
  });
  const started = new Promise<Record<string, unknown>>((resolve, reject) => {
    createInterface({ input: proc.stdout }).once('line', (l) => resolve(JSON.parse(l) as Record<string, unknown>));
    proc.once('exit', (code) => reject(new Error(`fleetgw sim exited with ${String(code)}: ${err}`)));
  });
  return { proc, stderr: () => err, started };
}

/** What `ps` shows of a process: its argv as the kernel reports it. */
function argvOf(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

describe('fleetgw sim: the robot token stays out of argv', () => {
  it('connects with the token from --robot-token-file and from FLEETGW_ROBOT_TOKEN; neither shows it in argv', async () => {
    const d = makeDataDir('fleetgw-sim-token-');
    dataDirs.push(d.dataDir);
    const gw = await startGatewayProcess(d.dataDir);
    gateways.push(gw);
    const fromFile = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'file']);
    const fromEnv = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'env']);
    const tokenFile = join(tmp, 'robot.token');
    writeFileSync(tokenFile, `${fromFile.robotToken}\n`, { mode: 0o600 });

    const a = startSim(['--grpc', gw.ready.grpc, '--robot-id', fromFile.robotId, '--robot-token-file', tokenFile, '--hz', '5'], cleanEnv());
    const b = startSim(['--grpc', gw.ready.grpc, '--robot-id', fromEnv.robotId, '--hz', '5'], cleanEnv({ FLEETGW_ROBOT_TOKEN: fromEnv.robotToken }));
    expect(await a.started).toMatchObject({ event: 'sim-started', robots: 1 });
    expect(await b.started).toMatchObject({ event: 'sim-started', robots: 1 });
    for (const robotId of [fromFile.robotId, fromEnv.robotId]) {
      await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robotId}`)).body.online === true, 15_000, `robot ${robotId} online`);
    }
    // Authenticated by the gateway: the tokens were read right.
    const argvA = argvOf(a.proc.pid!);
    expect(argvA).toContain('--robot-token-file');
    expect(argvA).toContain(fromFile.robotId);
    expect(argvA).not.toContain(fromFile.robotToken);
    const argvB = argvOf(b.proc.pid!);
    expect(argvB).toContain(fromEnv.robotId);
    expect(argvB).not.toContain(fromEnv.robotToken);
    for (const s of [a, b]) {
      expect(s.stderr()).not.toContain('warning');
      expect(s.stderr()).not.toContain(fromFile.robotToken);
      expect(s.stderr()).not.toContain(fromEnv.robotToken);
    }
  }, 60_000);

  it('still accepts --robot-token (compatibility) and warns that it is visible in ps', async () => {
    const d = makeDataDir('fleetgw-sim-token-');
    dataDirs.push(d.dataDir);
    const gw = await startGatewayProcess(d.dataDir);
    gateways.push(gw);
    const r = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'flag']);
    const s = startSim(['--grpc', gw.ready.grpc, '--robot-id', r.robotId, '--robot-token', r.robotToken, '--hz', '5'], cleanEnv());
    expect(await s.started).toMatchObject({ event: 'sim-started' });
    await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${r.robotId}`)).body.online === true, 15_000, 'robot online');
    expect(s.stderr()).toMatch(/^fleetgw: warning: --robot-token is visible to other users/);
    expect(s.stderr()).not.toContain(r.robotToken);
  }, 60_000);
});

describe('fleetgw sim token arguments: one line on stderr, exit 2, never the token', () => {
  const id = '00000000-0000-4000-8000-000000000000';
  const good = join(tmp, 'good.token');
  const empty = join(tmp, 'empty.token');
  const spaced = join(tmp, 'spaced.token');
  writeFileSync(good, 'tok-secret-1\n');
  writeFileSync(empty, '\n');
  writeFileSync(spaced, 'tok secret-2\n');
  const cases: [string, string[], NodeJS.ProcessEnv][] = [
    ['both token flags', ['--robot-id', id, '--robot-token', 'tok-secret-1', '--robot-token-file', good], cleanEnv()],
    ['missing token file', ['--robot-id', id, '--robot-token-file', join(tmp, 'nope.token')], cleanEnv()],
    ['empty token file', ['--robot-id', id, '--robot-token-file', empty], cleanEnv()],
    ['token file with a space', ['--robot-id', id, '--robot-token-file', spaced], cleanEnv()],
    ['malformed variable', ['--robot-id', id], cleanEnv({ FLEETGW_ROBOT_TOKEN: 'tok secret-2' })],
    ['no token anywhere', ['--robot-id', id], cleanEnv()],
    ['token file with a robots file', ['--robots-file', good, '--robot-token-file', good], cleanEnv()],
  ];
  it.each(cases)('%s', (_name, args, env) => {
    const r = fleetgw(['sim', '--grpc', '127.0.0.1:1', ...args], env);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^fleetgw: /);
    expect(r.stderr).not.toContain('secret');
  });
});
