/**
 * Where `fleetgw sim --robot-id` gets its robot's token. The command line of a process is readable by
 * every user of the host (`ps`, /proc/PID/cmdline), so the token should come from a file
 * (`--robot-token-file`, e.g. mode 0600) or the environment (`FLEETGW_ROBOT_TOKEN`, readable only by
 * the same user and root); `--robot-token` stays for compatibility and is unsafe on shared hosts.
 * Error messages name the source, never the token.
 */
import { readFileSync } from 'node:fs';
import { ROBOT_TOKEN_PATTERN } from '../config.js';
import { UsageError } from './usage.js';

/** The environment variable `fleetgw sim` reads a robot token from. */
export const ROBOT_TOKEN_ENV = 'FLEETGW_ROBOT_TOKEN';


export interface TokenSources {
  /** `--robot-token` (visible in ps). */
  flag: string | undefined;
  /** `--robot-token-file`. */
  file: string | undefined;
  /** FLEETGW_ROBOT_TOKEN, already checked (src/config.ts). */
  env: string | undefined;
}

/**
 * The token from exactly one source: `--robot-token-file`, else `--robot-token`, else
 * `FLEETGW_ROBOT_TOKEN`; `unsafe` is true when it came from the command line.
 * @throws UsageError for both flags at once, an unreadable or malformed file, a malformed variable, or no token at all
 */
export function resolveRobotToken(src: TokenSources): { token: string; unsafe: boolean } {
  if (src.flag !== undefined && src.file !== undefined) throw new UsageError('use either --robot-token-file or --robot-token, not both');
  if (src.file !== undefined) return { token: readTokenFile(src.file), unsafe: false };
  if (src.flag !== undefined) return { token: checked(src.flag, '--robot-token'), unsafe: true };
  if (src.env !== undefined) return { token: src.env, unsafe: false };
  throw new UsageError(`--robot-id needs its token: --robot-token-file FILE or ${ROBOT_TOKEN_ENV} (or --robot-token, visible to other users)`);
}

function readTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --robot-token-file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  // A trailing newline (echo, editors) is not part of the token.
  return checked(text.trim(), `--robot-token-file ${path}`);
}

function checked(token: string, source: string): string {
  if (!ROBOT_TOKEN_PATTERN.test(token)) throw new UsageError(`${source} must hold one robot token (1-512 printable ASCII characters, no spaces)`);
  return token;
}
