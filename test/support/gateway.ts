/**
 * Starts the real gateway (`fleetgw serve` from the built dist) as a child process on free loopback
 * ports and waits for its ready line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { addRobot } from '../../src/store/identity.js';
import { openStore } from '../../src/store/lmdb.js';
import { FLEETGW_BIN, adminJson } from './cli.js';
import { logResponse } from './response-log.js';

export interface ReadyLine {
  event: 'ready';
  /** The uWebSockets.js build serving HTTP (src/http/uws.ts), e.g. `uws-pack@20.0.8`. */
  uws: string;
  http: string;
  grpc: string;
  telemetryStore: 'chdb' | 'clickhouse';
  telemetryDecoder: 'native' | 'js' | 'reference';
  /** The telemetry schema version after the start-up migrations. */
  telemetrySchemaVersion: number | null;
}

export interface RunningGateway {
  ready: ReadyLine;
  proc: ChildProcess;
  stderr: () => string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A data dir with an org, a fleet and an all-permission key. */
export function makeDataDir(prefix = 'fleetgw-e2e-'): { dataDir: string; orgId: string; fleetId: string; apiKeyId: string; apiKey: string } {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const init = adminJson<{ orgId: string; fleetId: string; apiKeyId: string; apiKey: string }>(['init', '--data-dir', dataDir, '--org', 'Acme', '--fleet', 'Yard']);
  return { dataDir, ...init };
}

/**
 * Adds `count` active robots named `r0`, `r1`, … to a fleet, in this process: what `fleetgw admin
 * add-robot` does, without a process start per robot (seconds each on a loaded machine).
 */
export async function addRobots(dataDir: string, fleetId: string, count: number): Promise<{ robotId: string; robotToken: string }[]> {
  const store = openStore(dataDir);
  try {
    return Array.from({ length: count }, (_, i) => {
      const r = addRobot(store, { fleetId, name: `r${i}`, capabilities: [], active: true });
      return { robotId: r.record.robotId, robotToken: r.robotToken };
    });
  } finally {
    await store.close();
  }
}

/** Longest a gateway process may take to print its ready line. */
const READY_TIMEOUT_MS = 90_000;

/** Starts `fleetgw serve --data-dir DIR --port 0 --grpc-port 0 …extra` and waits for the ready line. */
export async function startGatewayProcess(dataDir: string, extra: string[] = ['--insecure-http'], env: NodeJS.ProcessEnv = {}): Promise<RunningGateway> {
  const proc = spawn(process.execPath, [FLEETGW_BIN, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let err = '';
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (d: string) => {
    err += d;
  });
  // A test that fails or times out before stopping it must not leave the gateway running.
  const killOnExit = (): void => {
    proc.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => {
    process.removeListener('exit', killOnExit);
    resolve(code);
  }));
  const ready = await new Promise<ReadyLine>((resolve, reject) => {
    // A bound for a loaded 2-core machine (the ready line itself is what this waits for).
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`gateway not ready within ${READY_TIMEOUT_MS / 1000} s; stderr:\n${err}`));
    }, READY_TIMEOUT_MS);
    const rl = createInterface({ input: proc.stdout });
    rl.on('line', (line) => {
      try {
        const msg = JSON.parse(line) as { event?: string };
        if (msg.event === 'ready') {
          clearTimeout(timer);
          resolve(msg as ReadyLine);
        }
      } catch {
        // not JSON: ignore
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${String(code)} before ready; stderr:\n${err}`));
    });
  });
  return {
    ready,
    proc,
    stderr: () => err,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** fetch with the API key; the response is logged for the /openapi.json check (response-log.ts). */
export async function api(base: string, key: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${base}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string> | undefined) },
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep text
  }
  await logResponse({ base, method: (init.method ?? 'GET').toUpperCase(), url: path, status: res.status, contentType: res.headers.get('content-type') ?? '', body });
  return { status: res.status, body, headers: res.headers };
}

/**
 * Waits until the gateway has compiled each robot's advertised command policy. Until then a
 * policy-bound command is refused with 422 "waiting to be compiled" (the gateway compiles a bounded
 * amount per second, and a loaded host can take seconds). The probe is a mode the policy does not
 * allow: a 422 either way, so nothing is ever sent to the robot.
 */
export async function untilPoliciesCompiled(base: string, key: string, orgId: string, fleetId: string, robotIds: string[], timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (const robotId of robotIds) {
    for (;;) {
      const r = await api(base, key, `/v1/orgs/${orgId}/fleets/${fleetId}/robots/${robotId}/mode`, {
        method: 'POST',
        body: JSON.stringify({ mode: 'no-such-mode-probe' }),
        headers: { 'content-type': 'application/json' },
      });
      if (r.status !== 422) throw new Error(`policy probe of robot ${robotId}: expected 422, got ${r.status} ${JSON.stringify(r.body)}`);
      if (!String(r.body.error).includes('waiting to be compiled')) break;
      if (Date.now() > end) throw new Error(`robot ${robotId}: command policy still not compiled after ${timeoutMs} ms`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }
}
