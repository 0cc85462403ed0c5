/**
 * `fleetgw` entry point. Exit codes: 0 ok, 1 runtime failure, 2 bad arguments (one line on stderr).
 */
import { runAdmin } from './admin.js';
import { runServe } from './serve.js';
import { runSimCommand } from './sim.js';
import { USAGE, UsageError } from './usage.js';

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** Runs the CLI with `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'serve':
        return await runServe(rest, out);
      case 'admin':
        return await runAdmin(rest, out);
      case 'sim':
        return await runSimCommand(rest, out);
      case '--help':
      case '-h':
      case 'help':
        out(USAGE);
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
