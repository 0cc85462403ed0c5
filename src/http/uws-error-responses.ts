/**
 * Whether the uWebSockets.js binary this process loads answers its own protocol errors (HTTP/1.0,
 * oversized header blocks, malformed framing) in JSON: `npm install` rewrites them from HTML with
 * scripts/patch-uws.mjs (docs/http-hardening.md). An install with `--ignore-scripts`, or a platform whose
 * binary the script does not patch, keeps the HTML answers; the gateway says so at start-up.
 */
import { readFile } from 'node:fs/promises';
import { apiError } from '../errors/catalog.js';
import { uwsBuild } from './uws.js';

/** `json`: patched; `html`: as published; `unknown`: neither found (another uWS build). */
export type UwsErrorBodies = 'json' | 'html' | 'unknown';

/** The 400 body the patch writes; it is built from the catalog, so a drift shows up as `unknown`. */
const PATCHED = Buffer.from(JSON.stringify(apiError('uws_malformed_request').toBody()), 'latin1');
const PUBLISHED = Buffer.from('<h1>Bad Request</h1><hr><i>uWebSockets/20 Server</i>', 'latin1');

/** Reads the loaded binary (about 7 MB, once, at start-up) and tells which error bodies it writes. */
export async function uwsErrorBodies(path = uwsBuild.binary): Promise<UwsErrorBodies> {
  const bytes = await readFile(path);
  if (bytes.includes(PATCHED)) return 'json';
  if (bytes.includes(PUBLISHED)) return 'html';
  return 'unknown';
}
