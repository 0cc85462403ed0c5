/**
 * API-key authentication (spec: Authentication, rules 1-2).
 *
 * The key is read only from `Authorization: Bearer <key>`; a URL query is never consulted, so a key
 * pasted into a URL authenticates nothing.
 *
 * Freshness contract: a change made by `fleetgw admin` in another process (revoke, expiry) applies
 * within {@link VERIFIED_TTL_MS}. A credential verified less than that long
 * ago is accepted from a small in-memory map without re-hashing it or re-reading LMDB: the hash and the
 * record read are a third of a cached robot read's CPU, and busy automation repeats one key thousands
 * of times a second. Older entries are re-verified against the LMDB bytes; the decoded record itself is
 * cached ({@link RawBytesCache}) while those bytes are unchanged. Presented keys are held
 * only in process memory, for at most the TTL, and never written anywhere.
 */
import { apiError } from '../errors/catalog.js';
import { requirePermission } from './access.js';
import type { AuthContext } from './context.js';
import type { Store } from '../store/lmdb.js';
import { RawBytesCache } from '../store/raw-bytes-cache.js';
import type { ApiKeyRecord } from '../store/records.js';
import { hashSecret, parseApiKey, secretMatches } from '../store/secrets.js';
import type { SessionService } from './users/sessions.js';

const BEARER = /^Bearer +(\S+) *$/i;

// Compared against when the key id is unknown, so an unknown id costs the same hash + compare as a
// wrong secret and key ids cannot be told apart by timing.
const DUMMY_HASH = hashSecret('fleetgw-unknown-key');

/** A key record with the caller identity it grants, built once per stored version of the record. */
interface KeyEntry {
  secretHash: Uint8Array;
  revoked: boolean;
  expiresAtMs: number | null;
  auth: AuthContext;
}

function toEntry(rec: ApiKeyRecord): KeyEntry {
  const auth: AuthContext = {
    actorType: 'api_key',
    apiKeyId: rec.apiKeyId,
    orgId: rec.orgId,
    fleetId: rec.fleetId,
    permissions: Object.freeze([...rec.permissions]),
  };
  // Shared by every request made with this key version: frozen so no handler can alter another's.
  return { secretHash: rec.secretHash, revoked: rec.revokedAtMs !== null, expiresAtMs: rec.expiresAtMs, auth: Object.freeze(auth) };
}

/** How long a verified credential is trusted without re-reading its record (revocation latency). */
export const VERIFIED_TTL_MS = 250;
/** Bound on recently verified credentials; when full, the oldest entry is dropped. */
const MAX_VERIFIED = 10_000;

interface Verified {
  entry: KeyEntry;
  checkedAtMs: number;
}

/**
 * The API-key verifier of one store: request authentication for the HTTP router (`RequestAuth` in
 * src/http/router.ts) and key validity for holders of something a key obtained earlier (stream
 * tickets, open telemetry streams). Built once by the composition root (src/gateway) and handed to
 * who needs it; its caches live and die with it.
 */
export class ApiKeyVerifier {
  /** Key records decoded once per stored version (every read still compares the stored bytes). */
  private readonly keys: RawBytesCache<KeyEntry, ApiKeyRecord>;
  /** Presented credentials verified recently, oldest first; at most MAX_VERIFIED. */
  private readonly verified = new Map<string, Verified>();

  /**
   * @param sessions user sessions: when given, {@link authenticateSession} accepts their cookie and
   *   {@link keyUsable} also answers for a session's id (a stream opened with a session's ticket)
   */
  constructor(store: Store, private readonly sessions?: SessionService) {
    this.keys = new RawBytesCache(store.apikeys, toEntry);
  }

  /**
   * Resolves the caller of a request.
   * @param authorization the raw Authorization header (undefined when absent)
   * @param nowMs wall clock used for the expiry check
   * @throws ApiError 401 `unauthorized` for a missing, malformed, unknown, wrong, revoked or expired key
   */
  authenticate(authorization: string | undefined, nowMs: number): AuthContext {
    const match = authorization === undefined ? null : BEARER.exec(authorization);
    const raw = match?.[1];
    if (raw === undefined) throw apiError('unauthorized');
    const recent = this.verified;
    const hit = recent.get(raw);
    // nowMs may step backwards (tests, clock changes): only a hit inside [checkedAt, checkedAt + TTL) counts.
    if (hit !== undefined && nowMs >= hit.checkedAtMs && nowMs - hit.checkedAtMs < VERIFIED_TTL_MS) {
      return usable(hit.entry, nowMs);
    }
    const parsed = parseApiKey(raw);
    if (parsed === null) throw apiError('unauthorized');
    const key = this.keys.get(parsed.apiKeyId);
    const ok = secretMatches(parsed.secret, key?.secretHash ?? DUMMY_HASH);
    if (key === undefined || !ok) {
      recent.delete(raw);
      throw apiError('unauthorized');
    }
    const auth = usable(key, nowMs);
    if (hit === undefined && recent.size >= MAX_VERIFIED) {
      const oldest = recent.keys().next().value;
      if (oldest !== undefined) recent.delete(oldest);
    }
    recent.delete(raw); // re-insert so Map order stays oldest-first
    recent.set(raw, { entry: key, checkedAtMs: nowMs });
    return auth;
  }

  /**
   * Resolves the caller of a request that carries no Authorization header from its session cookie
   * (src/auth/users/sessions.ts). Separate from {@link authenticate} so the API-key path stays as it
   * was: the router asks here only when no Authorization header came.
   * @param stateChanging POST, PUT, PATCH, DELETE: the `X-CSRF-Token` header must match the session's
   * @throws ApiError 401 `unauthorized` (no, unknown or ended session), 403 `csrf_failed`
   */
  authenticateSession(cookie: string | undefined, csrfToken: string | undefined, stateChanging: boolean, nowMs: number): AuthContext {
    if (this.sessions === undefined) throw apiError('unauthorized');
    return this.sessions.verify(cookie, csrfToken, stateChanging, nowMs).auth;
  }

  /** @throws ApiError 403 unless the key carries `permission` (retired permissions never count). */
  authorize(auth: AuthContext, permission: string): void {
    requirePermission(auth, permission);
  }

  /**
   * Whether `authorization` carries a credential this verifier has verified successfully before (it is
   * in the bounded verified-credential map, whatever its age). The failed-authentication throttle
   * (src/http/auth-throttle.ts) still lets such a credential be checked from a throttled address; a
   * guessed one can never be in the map. O(1), no hashing.
   */
  isKnownCredential(authorization: string | undefined): boolean {
    const raw = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
    return raw !== undefined && this.verified.has(raw);
  }

  /**
   * True when the key `apiKeyId` exists, is not revoked and has not expired at `nowMs` (the same rules
   * as {@link authenticate}): for holders of something the key obtained earlier (a stream ticket, an
   * open telemetry stream) that must end when the key is revoked or expires. Every call reads the
   * record's current bytes, so a `fleetgw admin revoke-key` made by another process is seen on the
   * next call; the decode is skipped while the bytes are unchanged, which keeps a periodic sweep over
   * many keys cheap.
   */
  keyUsable(apiKeyId: string, nowMs: number): boolean {
    const key = this.keys.get(apiKeyId);
    // Not a key: the credential id of a user session (AuthContext.apiKeyId), checked the same way.
    if (key === undefined) return this.sessions?.usable(apiKeyId, nowMs) ?? false;
    if (key.revoked) return false;
    return key.expiresAtMs === null || nowMs < key.expiresAtMs;
  }
}

function usable(key: KeyEntry, nowMs: number): AuthContext {
  if (key.revoked) throw apiError('unauthorized');
  if (key.expiresAtMs !== null && nowMs >= key.expiresAtMs) throw apiError('unauthorized');
  return key.auth;
}
