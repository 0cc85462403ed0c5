// A start step that fails stops everything started before it: `fleetgw serve` with a fault injected
// at each plugin's start (FLEETGW_TEST_FAULT=start.<plugin>:throw) exits 1 on its own, with one fatal
// line naming the step, and leaves nothing holding the event loop (no decode worker, timer, socket
// or LMDB writer would let the process end by itself otherwise).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { orderPlugins } from '../../src/gateway/compose.js';
import type { GatewayContext } from '../../src/gateway/parts.js';
import { gatewayPlugins } from '../../src/gateway/plugins/index.js';
import { parseLogLines } from '../support/capture-log.js';
import { FLEETGW_BIN } from '../support/cli.js';
import { makeDataDir } from '../support/gateway.js';

// The factories only keep the context until start: the names and order need no real one.
const STEPS = orderPlugins(gatewayPlugins({ opts: {} } as unknown as GatewayContext)).map((p) => `start.${p.name}`);
// A loose bound for a 2-core machine under load: a gateway that stopped everything exits within
// seconds of the failure; one that left a worker or a socket open never does.
const EXIT_BOUND_MS = 60_000;

interface Exit {
  code: number | null;
  stderr: string;
  stdout: string;
}

/** What a diagnostic report says holds the loop: its JS stack and its active libuv handles (waits up to 10 s for it). */
async function waitForReport(dir: string): Promise<string> {
  for (const t0 = Date.now(); Date.now() - t0 < 10_000; await new Promise((r) => setTimeout(r, 100))) {
    const file = readdirSync(dir).find((f) => f.endsWith('.json'));
    if (file === undefined) continue;
    try {
      const r = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { javascriptStack?: { stack?: string[] }; libuv?: { type: string; is_active: boolean; is_referenced?: boolean; address?: string; localEndpoint?: unknown; remoteEndpoint?: unknown }[] };
      const handles = (r.libuv ?? []).filter((h) => h.is_active && h.is_referenced !== false).map((h) => JSON.stringify(h));
      return `diagnostic report: active referenced handles:\n${handles.join('\n')}\nJS stack:\n${(r.javascriptStack?.stack ?? []).join('\n')}`;
    } catch {
      // Still being written.
    }
  }
  return 'no diagnostic report within 10 s (the process may be stuck outside JavaScript)';
}

function serveWithFault(dataDir: string, step: string): Promise<Exit> {
  // A process that does not exit is asked for a Node diagnostic report first: its libuv handles and
  // stacks name what holds the event loop.
  const reportDir = mkdtempSync(join(tmpdir(), 'fleetgw-start-fail-report-'));
  const proc = spawn(process.execPath, ['--report-on-signal', '--report-signal=SIGPWR', `--report-directory=${reportDir}`, FLEETGW_BIN, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0', '--insecure-http'], {
    env: { ...process.env, FLEETGW_TEST_FAULT: `${step}:throw` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  return new Promise((resolve, reject) => {
    const bound = setTimeout(() => {
      proc.kill('SIGPWR');
      void waitForReport(reportDir).then((report) => {
        proc.kill('SIGKILL');
        rmSync(reportDir, { recursive: true, force: true });
        reject(new Error(`fleetgw serve with a fault at ${step} did not exit on its own within ${EXIT_BOUND_MS} ms: something still holds its event loop\n${stderr}\n${report}`));
      });
    }, EXIT_BOUND_MS);
    proc.on('exit', (code) => {
      clearTimeout(bound);
      rmSync(reportDir, { recursive: true, force: true });
      // 'exit' may come before the pipes drain.
      proc.stderr.on('end', () => resolve({ code, stderr, stdout }));
      if (proc.stderr.readableEnded) resolve({ code, stderr, stdout });
    });
  });
}

describe('a failed start step stops what started and ends the process', () => {
  const d = makeDataDir('fleetgw-start-fail-');
  afterAll(() => rmSync(d.dataDir, { recursive: true, force: true }));

  it('composes every plugin of the gateway', () => {
    expect(STEPS.length).toBeGreaterThan(10);
    expect(STEPS[0]).toBe('start.store');
  });

  it.each(STEPS)('%s: exit 1, one fatal line naming the step, nothing left running', async (step) => {
    const r = await serveWithFault(d.dataDir, step);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).not.toContain('"event":"ready"');
    const fatal = parseLogLines(r.stderr).filter((l) => l.level === 'fatal');
    expect(fatal, r.stderr).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ step, msg: `fleetgw serve could not start: injected test fault at ${step}` });
    // Every stop hook settled: one that misses its deadline (STOP_PHASE_DEADLINE_MS) is named in
    // `stuck`, and the process only ended because serve exits anyway after it.
    expect((fatal[0] as { stuck?: string[] }).stuck, r.stderr).toBeUndefined();
  }, EXIT_BOUND_MS + 10_000);
});
