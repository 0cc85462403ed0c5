/**
 * The session cookie's value and the CSRF token derived from it.
 *
 * Cookie value: `fgs_<session id hex>_<secret>`, the secret 256 random bits; only SHA-256 of the
 * secret is stored (as for API keys: a single hash is sound for a high-entropy secret).
 *
 * CSRF token: base64url(SHA-256("fleetgw-csrf:" + secret)). A page on another site can make the
 * browser send the cookie (SameSite=Strict already stops that in current browsers) but can neither
 * read the cookie nor compute this token, so a state-changing call that carries the session cookie
 * must also carry the token in `X-CSRF-Token`. Derived, not stored: the server recomputes it from the
 * cookie, and `GET /v1/sessions/current` can hand it out again after a page reload.
 */
import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../../store/secrets.js';

const PREFIX = 'fgs_';
const UUID_HEX = /^[0-9a-f]{32}$/;

/** The session cookie's name (also published in /openapi.json's security schemes). */
export const SESSION_COOKIE = 'fleetgw_session';

export interface MintedSession {
  sessionId: string;
  token: string;
  secretHash: Uint8Array;
  csrfToken: string;
}

/** A new session id, cookie value and CSRF token. */
export function mintSessionToken(): MintedSession {
  const sessionId = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  return { sessionId, token: `${PREFIX}${sessionId.replaceAll('-', '')}_${secret}`, secretHash: hashSecret(secret), csrfToken: csrfFor(secret) };
}

/** Splits a cookie value into session id and secret; null when it is not shaped like ours. */
export function parseSessionToken(raw: string): { sessionId: string; secret: string } | null {
  if (!raw.startsWith(PREFIX) || raw.length > 128) return null;
  const hex = raw.slice(PREFIX.length, PREFIX.length + 32);
  if (!UUID_HEX.test(hex) || raw[PREFIX.length + 32] !== '_') return null;
  const secret = raw.slice(PREFIX.length + 33);
  if (secret.length < 16) return null;
  const sessionId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { sessionId, secret };
}

/** The CSRF token of the session whose secret is `secret`. */
export function csrfFor(secret: string): string {
  return hash('sha256', `fleetgw-csrf:${secret}`, 'base64url');
}

/** Constant-time check of a presented CSRF token against the session's. */
export function csrfMatches(presented: string | undefined, secret: string): boolean {
  if (presented === undefined) return false;
  const want = Buffer.from(csrfFor(secret));
  const got = Buffer.from(presented);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** The value of cookie `name` in a Cookie header (`a=1; b=2`), or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
