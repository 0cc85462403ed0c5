/**
 * ClickHouse credentials for `fleetgw serve`: the user from `--clickhouse-user` (or the URL, or
 * FLEETGW_CLICKHOUSE_USER), the password from a file or the environment only. A command line is
 * readable by every local user (ps, /proc/PID/cmdline) and lands in shell history and unit files, so a
 * password given as an argument is refused before anything else is parsed.
 */
import { readFileSync, statSync } from 'node:fs';
import type { FleetgwConfig } from '../config.js';
import { UsageError } from './usage.js';

export const PASSWORD_ENV = 'FLEETGW_CLICKHOUSE_PASSWORD';

export interface ClickHouseCredentials {
  username?: string;
  password?: string;
}

const PASSWORD_FLAG = '--clickhouse-password';

/**
 * Refuses `--clickhouse-password[=…]` with a message that says what to do instead (without it the
 * strict parser would only say "unknown option"). Runs before parsing so the value is never echoed.
 */
export function refusePasswordArgument(argv: readonly string[]): void {
  if (argv.some((a) => a === PASSWORD_FLAG || a.startsWith(`${PASSWORD_FLAG}=`))) {
    throw new UsageError(
      `${PASSWORD_FLAG} is refused: a password on the command line is visible to every local user (ps, /proc). ` +
        `Put it in a file readable only by the gateway's user and pass --clickhouse-password-file FILE, or set ${PASSWORD_ENV}`,
    );
  }
}

/** The file's content without one trailing newline (what `echo secret > file` adds); errors name `flag`. */
export function readPasswordFile(path: string, warn: (msg: string) => void, flag = '--clickhouse-password-file'): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
    // Group/world-readable secrets are an operator mistake worth flagging, not worth refusing:
    // container secret mounts often keep the mode of the host file.
    if ((statSync(path).mode & 0o004) !== 0) warn(`${flag} ${path} is readable by every user: chmod 600 it`);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e instanceof Error ? e.message : String(e));
    throw new UsageError(`cannot read ${flag} ${path}: ${code}`);
  }
  const password = text.replace(/\r?\n$/, '');
  if (password === '') throw new UsageError(`${flag} ${path} is empty`);
  if (/[\r\n]/.test(password)) throw new UsageError(`${flag} ${path} holds more than one line`);
  return password;
}

/**
 * Resolves the user and password. Precedence for the user: `--clickhouse-user`, then the URL's
 * username, then FLEETGW_CLICKHOUSE_USER (the flag and the URL together are ambiguous and refused).
 * The password comes from exactly one of the file and the environment.
 * @throws UsageError naming the option or variable at fault
 */
export function resolveClickHouseCredentials(
  input: { userFlag?: string; urlUser?: string; passwordFile?: string },
  env: Pick<FleetgwConfig, 'clickhouseUser' | 'clickhousePassword'>,
  warn: (msg: string) => void,
): ClickHouseCredentials {
  if (input.userFlag !== undefined && input.urlUser !== undefined) {
    throw new UsageError('give the ClickHouse user once: --clickhouse-user or the username in --clickhouse-url, not both');
  }
  const envPassword = env.clickhousePassword;
  if (input.passwordFile !== undefined && envPassword !== undefined) {
    throw new UsageError(`give the ClickHouse password one way: --clickhouse-password-file or ${PASSWORD_ENV}, not both`);
  }
  const username = input.userFlag ?? input.urlUser ?? env.clickhouseUser;
  const password = input.passwordFile !== undefined ? readPasswordFile(input.passwordFile, warn) : envPassword;
  return { ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}) };
}
