// Writes docs/errors.md from the error catalog (src/errors/catalog.ts, built to dist/).
// test/errors/catalog.test.ts fails when the two differ, so run this after changing the catalog.
import { writeFileSync } from 'node:fs';
import { ERROR_CATALOG } from '../dist/errors/catalog.js';

const lines = [
  '# Errors',
  '',
  'Every error response has the body `{"error": "<human-readable message>", "code": "<machine code>"}`;',
  'some add a `details` object. Codes come from the service interface\'s set; the catalog id is internal',
  '(it names the situation) and the message template shows the text, with `{placeholders}` filled in.',
  'Generated from `src/errors/catalog.ts` by `node scripts/gen-errors-doc.mjs`; a test keeps them equal.',
  '',
  '| id | status | code | message |',
  '|---|---|---|---|',
  ...Object.entries(ERROR_CATALOG).map(([id, e]) => `| \`${id}\` | ${e.status} | \`${e.code}\` | ${e.template.replaceAll('|', '\\|')} |`),
  '',
  '429 responses carry `Retry-After` (seconds). 405 responses carry `Allow`.',
  '',
  'A few malformed requests are answered by uWebSockets.js itself, before the gateway sees them: the',
  '`uws_*` entries above (400 for Content-Length with Transfer-Encoding or a malformed Content-Length, 431',
  'for a header block over 64 KiB, 505 for HTTP/1.0), with JSON bodies that `npm install` writes into its',
  'binary (scripts/patch-uws.mjs). docs/http-hardening.md lists them and why.',
  '',
];
writeFileSync(new URL('../docs/errors.md', import.meta.url), lines.join('\n'));
console.log('wrote docs/errors.md');
