/**
 * Reads the browser dashboard's bundle (built from web/dashboard/ into dist/dashboard/ by
 * scripts/build-dashboard.mjs at install) once at start, and prepares each file (ETag, gzip, Brotli)
 * for GET / and GET /app/{file}.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PreparedAsset } from '../api/prepared-body.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** The bundle's directory: src/ and dist/ are both two levels below the repository root. */
const BUNDLE_DIR = fileURLToPath(new URL('../../dist/dashboard/', import.meta.url));

/**
 * The dashboard's files by name (`index.html` is the page itself).
 * @param dir the bundle directory (default: dist/dashboard of this checkout)
 * @throws Error when the bundle was not built (no index.html) or a file cannot be read
 */
export async function loadDashboardAssets(dir = BUNDLE_DIR): Promise<Map<string, PreparedAsset>> {
  const names = await readdir(dir).catch((err: unknown) => {
    throw new Error(`dashboard: cannot read ${dir} (run npm install or npm run build): ${(err as Error).message}`);
  });
  if (!names.includes('index.html')) throw new Error(`dashboard: ${dir} holds no index.html (run npm run build)`);
  const prepared = await Promise.all(
    names
      .filter((name) => !name.endsWith('.map'))
      .map(async (name) => {
        const type = TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';
        return [name, await PreparedAsset.of(await readFile(join(dir, name)), type)] as const;
      }),
  );
  return new Map(prepared);
}
