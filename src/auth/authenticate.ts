/**
 * API-key authentication (spec: Authentication, rules 1-2).
 *
 * The key is read only from `Authorization: Bearer <key>`; a URL query is never consulted, so a key
 * pasted into a URL authenticates nothing. The key record is read from LMDB on every call, without a
 * cache, so a `fleetgw admin revoke-key` run by another process applies to the very next request.
 */
import { apiError } from '../errors/catalog.js';
import type { AuthContext } from '../http/types.js';
import type { Store } from '../store/lmdb.js';
import { hashSecret, parseApiKey, secretMatches } from '../store/secrets.js';

const BEARER = /^Bearer +(\S+) *$/i;

// Compared against when the key id is unknown, so an unknown id costs the same hash + compare as a
// wrong secret and key ids cannot be told apart by timing.
const DUMMY_HASH = hashSecret('fleetgw-unknown-key');

/**
 * Resolves the caller of a request.
 * @param authorization the raw Authorization header (undefined when absent)
 * @param nowMs wall clock used for the expiry check
 * @throws ApiError 401 `unauthorized` for a missing, malformed, unknown, wrong, revoked or expired key
 */
export function authenticate(store: Store, authorization: string | undefined, nowMs: number): AuthContext {
  const match = authorization === undefined ? null : BEARER.exec(authorization);
  const parsed = match?.[1] === undefined ? null : parseApiKey(match[1]);
  if (parsed === null) throw apiError('unauthorized');
  const rec = store.apikeys.get(parsed.apiKeyId);
  const ok = secretMatches(parsed.secret, rec?.secretHash ?? DUMMY_HASH);
  if (rec === undefined || !ok) throw apiError('unauthorized');
  if (rec.revokedAtMs !== null) throw apiError('unauthorized');
  if (rec.expiresAtMs !== null && nowMs >= rec.expiresAtMs) throw apiError('unauthorized');
  return {
    actorType: 'api_key',
    apiKeyId: rec.apiKeyId,
    orgId: rec.orgId,
    fleetId: rec.fleetId,
    permissions: rec.permissions,
  };
}
