/**
 * Minting, hashing and constant-time checking of API keys and robot tokens.
 *
 * Both secrets are 256 random bits, so a single SHA-256 is a sound digest (no password stretching is
 * needed for high-entropy secrets) and keeps authentication on the request path at about a microsecond.
 */
import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

const KEY_PREFIX = 'fgk_';
const UUID_HEX = /^[0-9a-f]{32}$/;

/** SHA-256 digest of a secret string. */
export function hashSecret(secret: string): Uint8Array {
  // One-shot hash: one native call per request instead of createHash().update().digest()'s three.
  return hash('sha256', secret, 'buffer');
}

/** Constant-time comparison of a presented secret against a stored digest. */
export function secretMatches(presented: string, storedHash: Uint8Array): boolean {
  const digest = hashSecret(presented);
  return digest.length === storedHash.length && timingSafeEqual(digest, storedHash);
}

function hexToUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A new API key: `fgk_<key id hex>_<secret>`. The id is public; only the secret's digest is stored. */
export function mintApiKey(): { apiKeyId: string; apiKey: string; secretHash: Uint8Array } {
  const apiKeyId = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  return { apiKeyId, apiKey: `${KEY_PREFIX}${apiKeyId.replaceAll('-', '')}_${secret}`, secretHash: hashSecret(secret) };
}

/** Splits a presented API key into its id and secret; null when it is not shaped like one of ours. */
export function parseApiKey(raw: string): { apiKeyId: string; secret: string } | null {
  if (!raw.startsWith(KEY_PREFIX) || raw.length > 128) return null;
  const hex = raw.slice(KEY_PREFIX.length, KEY_PREFIX.length + 32);
  if (!UUID_HEX.test(hex) || raw[KEY_PREFIX.length + 32] !== '_') return null;
  const secret = raw.slice(KEY_PREFIX.length + 33);
  if (secret.length < 16) return null;
  return { apiKeyId: hexToUuid(hex), secret };
}

/** A new robot token (the robot presents it with its robot id). */
export function mintRobotToken(): { token: string; tokenHash: Uint8Array } {
  const token = `fgr_${randomBytes(32).toString('base64url')}`;
  return { token, tokenHash: hashSecret(token) };
}
