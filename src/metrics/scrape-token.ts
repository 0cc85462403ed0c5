/**
 * The bearer token that opens `GET /metrics`. Metrics are gateway-wide (every organization's robots
 * and traffic, summed), so no organization's API key may read them and the interface's permission set
 * has none for them: a separate secret, held by the operator's Prometheus.
 *
 * The token lives in a file (`--metrics-token-file`, default `<dataDir>/metrics-token`): never on a
 * command line or in a URL. A missing default file is created on first start with a 256-bit random
 * token, mode 0600. Only its SHA-256 digest stays in memory; a presented token is hashed and compared
 * in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';

/** Checks the Authorization header of a scrape. */
export interface ScrapeAuth {
  /** True when `authorization` is `Bearer <the token>`. */
  allows(authorization: string | undefined): boolean;
}

const MIN_TOKEN_CHARS = 32;

/**
 * Reads the token file (creating it when `create` and it does not exist).
 * @throws Error naming the file when it cannot be read or holds a token shorter than 32 characters
 */
export async function loadScrapeToken(file: string, create: boolean): Promise<ScrapeAuth> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if (!create || (e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read the metrics token file ${file}: ${(e as Error).message}`);
    text = randomBytes(32).toString('base64url');
    // 'wx': never overwrite a token another process wrote meanwhile.
    await writeFile(file, `${text}\n`, { mode: 0o600, flag: 'wx' }).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      text = await readFile(file, 'utf8');
    });
  }
  const token = text.trim();
  if (token.length < MIN_TOKEN_CHARS || /\s/.test(token)) throw new Error(`the metrics token in ${file} must be one line of at least ${MIN_TOKEN_CHARS} characters without spaces`);
  const digest = sha256(token);
  return {
    allows(authorization) {
      if (authorization === undefined) return false;
      const m = /^Bearer +(\S+)\s*$/i.exec(authorization);
      return m !== null && timingSafeEqual(sha256(m[1]!), digest);
    },
  };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
