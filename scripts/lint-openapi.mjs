// `npm run lint:openapi`: builds /openapi.json from the routes (src/gateway/openapi-document.ts, no
// server started, no build needed) and lints it with Redocly CLI under redocly.yaml. With `--out FILE`
// it only writes the document. Exit code: Redocly's (non-zero on any error).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
register('./ts-hooks.mjs', import.meta.url);
const { offlineOpenApiDocument } = await import('../src/gateway/openapi-document.ts');
const doc = JSON.stringify(await offlineOpenApiDocument(), null, 2);

const outAt = process.argv.indexOf('--out');
if (outAt !== -1) {
  writeFileSync(process.argv[outAt + 1], doc);
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'fleetgw-openapi-lint-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, doc);
  const res = spawnSync(join(root, 'node_modules/.bin/redocly'), ['lint', '--config', join(root, 'redocly.yaml'), file], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  process.exitCode = res.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
