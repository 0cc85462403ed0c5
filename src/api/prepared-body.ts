/**
 * Response bodies prepared once and served many times: /openapi.json, the API docs' files, the
 * dashboard's assets. Each carries a strong ETag and its gzip and Brotli forms, computed off the event
 * loop when the body is prepared; the router (src/http/conditional.ts) answers `If-None-Match` with
 * 304 and picks the encoding the client accepts. Per request this costs a header comparison, never a
 * compression.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { JsonText } from './json-text.js';
import { RawBody } from './raw-body.js';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Below this size a compressed form saves less than its headers cost: not made. */
const MIN_COMPRESS_BYTES = 1024;

/** What the router needs to serve a prepared body conditionally and compressed. */
export interface Prepared {
  /** Strong validator, quoted (`"sha256-…"`). */
  readonly etag: string;
  /** gzip form, or null when it would not be smaller. */
  readonly gzip: Uint8Array | null;
  /** Brotli form, or null when it would not be smaller. */
  readonly br: Uint8Array | null;
  /** `Cache-Control` to send with it. */
  readonly cacheControl: string;
}

/** A JSON body prepared once: its text, ETag and compressed forms (see the module comment). */
export class PreparedJson<T = unknown> extends JsonText<T> implements Prepared {
  private constructor(
    text: string,
    readonly etag: string,
    readonly gzip: Uint8Array | null,
    readonly br: Uint8Array | null,
    readonly cacheControl: string,
  ) {
    super(text);
  }

  /**
   * Prepares JSON text; compression runs on libuv's thread pool.
   * @param cacheControl e.g. `no-cache` (revalidate each use: cheap with the ETag)
   */
  static async of<T>(text: string, cacheControl = 'no-cache'): Promise<PreparedJson<T>> {
    const bytes = Buffer.from(text, 'utf8');
    const { etag, gz, br } = await prepareBytes(bytes);
    return new PreparedJson<T>(text, etag, gz, br, cacheControl);
  }
}

/** A non-JSON body (a static file) prepared once; see the module comment. */
export class PreparedAsset extends RawBody implements Prepared {
  private constructor(
    bytes: Uint8Array,
    contentType: string,
    readonly etag: string,
    readonly gzip: Uint8Array | null,
    readonly br: Uint8Array | null,
    readonly cacheControl: string,
  ) {
    super(bytes, contentType);
  }

  /**
   * Prepares a file's bytes; compression runs on libuv's thread pool.
   * @param contentType e.g. `text/css; charset=utf-8`
   * @param cacheControl e.g. `no-cache`, or `public, max-age=…, immutable` for content-named files
   */
  static async of(bytes: Uint8Array, contentType: string, cacheControl = 'no-cache'): Promise<PreparedAsset> {
    const { etag, gz, br } = await prepareBytes(bytes);
    return new PreparedAsset(bytes, contentType, etag, gz, br, cacheControl);
  }
}

/** True for a body the router serves conditionally and compressed. */
export function isPrepared(body: unknown): body is Prepared & (PreparedJson | PreparedAsset) {
  return body instanceof PreparedJson || body instanceof PreparedAsset;
}

async function prepareBytes(bytes: Uint8Array): Promise<{ etag: string; gz: Uint8Array | null; br: Uint8Array | null }> {
  const etag = `"sha256-${createHash('sha256').update(bytes).digest('base64url')}"`;
  if (bytes.length < MIN_COMPRESS_BYTES) return { etag, gz: null, br: null };
  // Quality 9 rather than 11: a few times faster for a few percent larger, and these run at start-up
  // or on the first request for a document.
  const [gz, br] = await Promise.all([
    gzipAsync(bytes, { level: 9 }),
    brotliAsync(bytes, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length } }),
  ]);
  return { etag, gz: gz.length < bytes.length ? gz : null, br: br.length < bytes.length ? br : null };
}
