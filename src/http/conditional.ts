/**
 * Conditional and compressed answers for prepared bodies (src/api/prepared-body.ts): `If-None-Match`
 * gets 304 without a body (RFC 9110 section 13.1.2, weak comparison), and the body goes out in the
 * best encoding the client accepts (Brotli, then gzip, then identity; RFC 9110 section 12.5.3).
 * Everything here was computed when the body was prepared: per request it is header parsing only.
 */
import type { Prepared } from '../api/prepared-body.js';
import type { PlainResponse, RequestHeaders } from './types.js';

/**
 * The response for a prepared body.
 * @param status the handler's status (only a 200 becomes a 304)
 * @param identity the body as is, with its content type
 */
export function preparedResponse(
  status: number,
  prepared: Prepared,
  identity: { bytes: string | Uint8Array; contentType: string },
  handlerHeaders: Record<string, string> | undefined,
  req: RequestHeaders,
): PlainResponse {
  const headers: Record<string, string> = { ...handlerHeaders, etag: prepared.etag, 'cache-control': prepared.cacheControl, vary: 'Accept-Encoding' };
  const ifNoneMatch = req['if-none-match'];
  if (status === 200 && ifNoneMatch !== undefined && etagMatches(ifNoneMatch, prepared.etag)) {
    return { status: 304, headers, body: '' };
  }
  headers['content-type'] = identity.contentType;
  const encoding = pickEncoding(req['accept-encoding'], prepared.br !== null, prepared.gzip !== null);
  if (encoding === 'br') return { status, headers: { ...headers, 'content-encoding': 'br' }, body: prepared.br as Uint8Array };
  if (encoding === 'gzip') return { status, headers: { ...headers, 'content-encoding': 'gzip' }, body: prepared.gzip as Uint8Array };
  return { status, headers, body: identity.bytes };
}

/** `If-None-Match` against a strong tag: `*`, or any listed tag equal by weak comparison. */
export function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  for (const part of header.split(',')) {
    const tag = part.trim();
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}

/**
 * The encoding to send: the first of br, gzip the client accepts with q > 0 and that exists; else
 * identity. A `*` accepts both unless named with q=0.
 */
export function pickEncoding(header: string | undefined, hasBr: boolean, hasGzip: boolean): 'br' | 'gzip' | null {
  if (header === undefined || header === '') return null;
  const q = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    if (name === undefined || name === '') continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) weight = Number(m[1]);
    }
    q.set(name.trim(), Number.isFinite(weight) ? weight : 0);
  }
  const accepts = (name: string): boolean => (q.get(name) ?? q.get('*') ?? 0) > 0;
  if (hasBr && accepts('br')) return 'br';
  if (hasGzip && accepts('gzip')) return 'gzip';
  return null;
}
