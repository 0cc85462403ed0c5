/**
 * `fleetgw` entry point. Exit codes: 0 ok, 1 runtime failure, 2 bad arguments (one line on stderr).
 */
import { readFileSync } from 'node:fs';
import { parseConfig, type FleetgwConfig } from '../config.js';
import { runAdmin } from './admin.js';
import { runServe } from './serve.js';
import { runSimCommand } from './sim.js';
import { USAGE, usageOf, UsageError } from './usage.js';

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** The package's version (package.json two levels above this module, in src/ and in dist/ alike). */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

const HELP = new Set(['--help', '-h']);

/**
 * The usage of `cmd` when its arguments ask for help (`--help` or `-h` before any `--`): the whole
 * command's, or one admin subcommand's. Throws UsageError for an admin subcommand that does not exist.
 */
function helpFor(cmd: string, rest: string[]): string | undefined {
  const end = rest.indexOf('--');
  if (!(end === -1 ? rest : rest.slice(0, end)).some((a) => HELP.has(a))) return undefined;
  const sub = cmd === 'admin' && rest[0] !== undefined && !rest[0].startsWith('-') ? rest[0] : undefined;
  const text = usageOf(sub === undefined ? cmd : `${cmd} ${sub}`);
  if (text === undefined) throw new UsageError(`unknown admin subcommand '${sub ?? ''}'; see fleetgw admin --help`);
  return text;
}

/** The environment, parsed and checked once (src/config.ts); a bad value is a usage error naming the variable. */
function environment(): FleetgwConfig {
  try {
    return parseConfig(process.env);
  } catch (err: unknown) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** Runs the CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    if (cmd === 'serve' || cmd === 'admin' || cmd === 'sim') {
      const help = helpFor(cmd, rest);
      if (help !== undefined) {
        out(help);
        return 0;
      }
    }
    switch (cmd) {
      case 'serve':
        return await runServe(rest, out, environment());
      case 'admin':
        return await runAdmin(rest, out);
      case 'sim':
        return await runSimCommand(rest, out, environment());
      case '--help':
      case '-h':
      case 'help':
        out(USAGE);
        return 0;
      case '--version':
        out(version());
        return 0;
      default:
        throw new UsageError(cmd === undefined ? 'missing command (serve, admin, sim); see fleetgw --help' : `unknown command '${cmd}'; see fleetgw --help`);
    }
  } catch (err: unknown) {
    if (err instanceof UsageError) {
      process.stderr.write(`fleetgw: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
