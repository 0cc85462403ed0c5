/** Runs the real `fleetgw` CLI (built JS under dist/, via bin/fleetgw.js) as a child process. */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const FLEETGW_BIN = fileURLToPath(new URL('../../bin/fleetgw.js', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `fleetgw …args` to completion (killed after 90 s: a bound for a loaded 2-core machine). */
export function fleetgw(args: string[], env: NodeJS.ProcessEnv = process.env): CliResult {
  const r = spawnSync(process.execPath, [FLEETGW_BIN, ...args], { encoding: 'utf8', env, timeout: 90_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs an admin command with --json and parses its output; throws with stderr on failure. */
export function adminJson<T = Record<string, string>>(args: string[]): T {
  const r = fleetgw(['admin', ...args, '--json']);
  if (r.status !== 0) throw new Error(`fleetgw admin ${args.join(' ')} exited ${String(r.status)}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
