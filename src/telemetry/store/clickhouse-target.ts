/**
 * Where the ClickHouse server store writes: the server's origin, the database, the user. The URL
 * passed to `--clickhouse-url` names the server and the database (its path); a password never travels
 * in it, because the URL sits on the command line, where every local user reads it (ps, /proc).
 */

/** A database name the gateway will create and quote without escaping. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export interface ClickHouseTarget {
  /** `http(s)://host:port`, no userinfo, no path. */
  origin: string;
  database: string;
  /** From the URL's userinfo, when it has one. */
  username?: string;
}

/**
 * Parses a `--clickhouse-url` value. Messages never repeat the URL (it could carry a password).
 * @throws Error naming the problem: not http(s), a password in the URL, a bad database name
 */
export function parseClickHouseUrl(raw: string): ClickHouseTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error('--clickhouse-url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('--clickhouse-url must be an http(s) URL');
  if (url.password !== '') {
    throw new Error('--clickhouse-url must not contain a password: use --clickhouse-password-file FILE or the FLEETGW_CLICKHOUSE_PASSWORD environment variable');
  }
  if (url.search !== '' || url.hash !== '') throw new Error('--clickhouse-url takes no query string or fragment');
  const path = url.pathname.replace(/^\/+|\/+$/g, '');
  const database = path === '' ? 'default' : decodeURIComponent(path);
  if (!IDENTIFIER.test(database)) {
    throw new Error(`--clickhouse-url: the database name (the URL path) must match ${IDENTIFIER.source}, got '${database}'`);
  }
  return { origin: url.origin, database, ...(url.username !== '' ? { username: decodeURIComponent(url.username) } : {}) };
}

/** True for a name the gateway may create (`CREATE DATABASE IF NOT EXISTS name`). */
export function isDatabaseName(name: string): boolean {
  return IDENTIFIER.test(name);
}
