/**
 * Reads the API reference page (web/api-docs/) and the Swagger UI files it loads (the swagger-ui-dist
 * package) once at start, and prepares each (ETag, gzip, Brotli) for GET /docs.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PreparedAsset } from '../api/prepared-body.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

/** The page and its script, from this repository (src/ and dist/ are both two levels below it). */
const WEB_DIR = fileURLToPath(new URL('../../web/api-docs/', import.meta.url));
const PAGE_FILES = ['index.html', 'init.js'];
/** What the page loads from Swagger UI's distribution. */
const SWAGGER_FILES = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'];

/**
 * The files of GET /docs by name (`index.html` is the page itself).
 * @throws Error naming the file that could not be read
 */
export async function loadApiDocsAssets(): Promise<Map<string, PreparedAsset>> {
  const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files = [...PAGE_FILES.map((f) => join(WEB_DIR, f)), ...SWAGGER_FILES.map((f) => join(swaggerDir, f))];
  const prepared = await Promise.all(
    files.map(async (file) => {
      const name = file.slice(file.lastIndexOf('/') + 1);
      const type = TYPES[name.slice(name.lastIndexOf('.'))] ?? 'application/octet-stream';
      const bytes = await readFile(file).catch((err: unknown) => {
        throw new Error(`API docs: cannot read ${file}: ${(err as Error).message}`);
      });
      return [name, await PreparedAsset.of(bytes, type)] as const;
    }),
  );
  return new Map(prepared);
}
