/**
 * Vitest global setup (runs once per `vitest run`, in the main vitest process):
 *
 * 1. Makes sure the compiled decode worker is current. Piscina runs JavaScript, so the telemetry pool
 *    uses dist/telemetry/decode/decode-worker-entry.cjs and decode-worker.js even under vitest (src/telemetry/decode/decode-pool.ts explains
 *    why). `npm install` builds dist; here only the worker's import closure is recompiled, and only
 *    when a source file is newer than its output (about a second).
 * 2. Provides a ClickHouse server URL to tests: FLEETGW_TEST_CLICKHOUSE_URL when set (checked to
 *    answer), else a private Debian clickhouse-server on free ports (about 0.4 s to start). When
 *    neither works: under CI=true setup throws (the run fails, tests never silently skip); otherwise
 *    tests that need ClickHouse skip with `clickhouseSkipReason`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { clickhouseServerUnavailableReason, startClickHouseServer, waitForClickHouse, type ClickHouseTestServer } from './clickhouse-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** ClickHouse server HTTP URL, or null when none could be started (see clickhouseSkipReason). */
    clickhouseUrl: string | null;
    clickhouseSkipReason: string;
  }
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function mtime(path: string): number {
  return existsSync(path) ? statSync(path).mtimeMs : -1;
}

/** Recompiles the decode worker's closure into dist/ when any of its sources is newer. */
function ensureDecodeWorkerBuilt(): void {
  const sources = [
    ...readdirSync(join(ROOT, 'src/telemetry'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') || f.endsWith('.cts')).map((f) => join(ROOT, 'src/telemetry', f)),
    join(ROOT, 'src/gen/fleetgw/v1/telemetry_pb.ts'),
  ];
  // tsc rewrites every output it emits, so the oldest of the two outputs marks the last build.
  const built = Math.min(mtime(join(ROOT, 'dist/telemetry/decode/decode-worker.js')), mtime(join(ROOT, 'dist/telemetry/decode/decode-worker-entry.cjs')));
  if (sources.every((src) => mtime(src) <= built)) return;
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-tsc-'));
  try {
    const cfg = join(dir, 'tsconfig.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.build.json'),
        // typeRoots: the temp tsconfig sits outside the repo, where @types/node would not be found.
        compilerOptions: { rootDir: join(ROOT, 'src'), outDir: join(ROOT, 'dist'), noEmit: false, typeRoots: [join(ROOT, 'node_modules/@types')] },
        files: [join(ROOT, 'src/telemetry/decode/decode-worker.ts'), join(ROOT, 'src/telemetry/decode/decode-worker-entry.cts')],
        include: [],
      }),
    );
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', cfg], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`building the decode worker failed:\n${r.stdout}${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function clickhouse(): Promise<{ url: string | null; reason: string; server: ClickHouseTestServer | null }> {
  const fromEnv = process.env.FLEETGW_TEST_CLICKHOUSE_URL;
  if (fromEnv) {
    const url = fromEnv.replace(/\/+$/, '');
    try {
      await waitForClickHouse(url, 10_000);
      return { url, reason: '', server: null };
    } catch (e) {
      return { url: null, reason: `FLEETGW_TEST_CLICKHOUSE_URL does not answer: ${e instanceof Error ? e.message : String(e)}`, server: null };
    }
  }
  const unavailable = clickhouseServerUnavailableReason();
  if (unavailable) return { url: null, reason: unavailable, server: null };
  try {
    const server = await startClickHouseServer();
    return { url: server.url, reason: '', server };
  } catch (e) {
    return { url: null, reason: `could not start clickhouse-server: ${e instanceof Error ? e.message : String(e)}`, server: null };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureDecodeWorkerBuilt();
  const ch = await clickhouse();
  if (ch.url === null && process.env.CI === 'true') {
    throw new Error(`CI=true and no ClickHouse server for tests: ${ch.reason}. Set FLEETGW_TEST_CLICKHOUSE_URL or install clickhouse-server.`);
  }
  project.provide('clickhouseUrl', ch.url);
  project.provide('clickhouseSkipReason', ch.url === null ? `ClickHouse unavailable: ${ch.reason}` : '');
  return async () => {
    await ch.server?.dispose();
  };
}
