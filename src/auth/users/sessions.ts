/**
 * Browser sessions of users: login, verification of the session cookie on each request, expiry and
 * revocation (docs/sessions.md).
 *
 * Expiry: a session ends `idleTimeoutMs` after its last request (default 30 min) and `maxAgeMs` after
 * login whatever the activity (default 12 h). The last request time is written at most once per
 * touch interval (a minute, or a quarter of the idle timeout if shorter), so the idle end is exact to
 * within that interval, and a busy dashboard costs one LMDB write a minute, not one per request.
 *
 * Every request reads the session and user records (LMDB reads, cheap next to the request; decodes skipped while the
 * bytes are unchanged), so a logout, `fleetgw admin revoke-sessions` from another process, or a
 * deleted user applies to the very next request. Nothing about sessions is kept only in memory.
 *
 * Per user at most {@link MAX_SESSIONS_PER_USER} live sessions: a new login past it revokes the
 * oldest (`superseded`). Ended sessions (expired, revoked) are deleted at the user's next login.
 */
import { randomBytes } from 'node:crypto';
import { apiError } from '../../errors/catalog.js';
import { indexRange } from '../../store/keys.js';
import type { Store } from '../../store/lmdb.js';
import { RawBytesCache } from '../../store/raw-bytes-cache.js';
import { secretMatches } from '../../store/secrets.js';
import type { AuthContext } from '../context.js';
import { LoginThrottle } from './login-throttle.js';
import { hashPassword, verifyPassword } from './password.js';
import { SESSIONS_BY_USER } from './keys.js';
import { isDisabled, type PasswordDigest, type SessionRecord, type UserRecord } from './records.js';
import { ROLE_PERMISSIONS } from './roles.js';
import { cookieValue, csrfFor, csrfMatches, mintSessionToken, parseSessionToken, SESSION_COOKIE } from './session-token.js';
import { findUserByEmail } from './users.js';
import type { Logger } from 'pino';

export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000;
export const DEFAULT_MAX_AGE_MS = 12 * 60 * 60_000;
export const MAX_SESSIONS_PER_USER = 20;
/**
 * Password checks running at once (each holds 32 MiB and a pool thread for a fraction of a second);
 * a login past it gets 503 with Retry-After instead of queueing without bound.
 */
export const MAX_CONCURRENT_CHECKS = 4;

export interface SessionServiceOptions {
  idleTimeoutMs?: number;
  maxAgeMs?: number;
  throttle?: LoginThrottle;
  now?: () => number;
  log?: Logger;
}

/** What a login attempt came to. The route turns failures into errors and timeline events. */
export type LoginOutcome =
  | { kind: 'ok'; user: UserRecord; session: SessionRecord; token: string; csrfToken: string }
  | { kind: 'failed'; reason: 'unknown_account' | 'wrong_password' | 'disabled_account'; user: UserRecord | undefined }
  | { kind: 'throttled'; retryAfterS: number; bound: 'account' | 'address'; user: UserRecord | undefined }
  | { kind: 'busy' };

/** A verified session: the caller identity and the session itself. */
export interface VerifiedSession {
  auth: AuthContext;
  session: SessionRecord;
  user: UserRecord;
}

/** Why a session record no longer authenticates at `nowMs`, or null while it does. */
export function sessionEnded(s: SessionRecord, nowMs: number): 'revoked' | 'expired' | 'idle' | null {
  if (s.revokedAtMs !== null) return 'revoked';
  if (nowMs >= s.expiresAtMs) return 'expired';
  if (nowMs >= s.lastSeenAtMs + s.idleTimeoutMs) return 'idle';
  return null;
}

/**
 * The sessions of one store. Built once by the composition root and handed to the API-key verifier
 * (which authenticates cookies through it) and the session routes.
 */
export class SessionService {
  readonly idleTimeoutMs: number;
  readonly maxAgeMs: number;
  readonly throttle: LoginThrottle;
  private readonly now: () => number;
  private readonly touchMs: number;
  private readonly sessions: RawBytesCache<SessionRecord>;
  private readonly users: RawBytesCache<UserRecord>;
  /** Sessions whose last-seen write is in flight (bounded by the live sessions). */
  private readonly touching = new Set<string>();
  private checksInFlight = 0;
  private dummy: Promise<PasswordDigest> | undefined;

  constructor(
    private readonly store: Store,
    private readonly opts: SessionServiceOptions = {},
  ) {
    this.idleTimeoutMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.maxAgeMs = opts.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
    this.throttle = opts.throttle ?? new LoginThrottle();
    this.now = opts.now ?? Date.now;
    this.touchMs = Math.min(60_000, Math.floor(this.idleTimeoutMs / 4));
    // Frozen: one decoded record is shared by every request until its bytes change.
    this.sessions = new RawBytesCache(store.sessions, (s) => Object.freeze(s));
    this.users = new RawBytesCache(store.users, (u) => Object.freeze(u));
  }

  /**
   * Checks a login and, when it is right, creates a session. The password check is asynchronous
   * scrypt; an unknown email is checked against a dummy digest so it costs the same time.
   * @param client the caller's address as the throttle counts it (IPv4, or IPv6 /64)
   */
  async login(email: string, password: string, client: string): Promise<LoginOutcome> {
    const account = email.trim().toLowerCase();
    const user = findUserByEmail(this.store, account);
    // The token is taken before the check: counted after it, concurrent logins would all pass the last one.
    const blocked = this.throttle.take(account, client, this.now());
    if (blocked !== null) return { kind: 'throttled', ...blocked, user };
    if (this.checksInFlight >= MAX_CONCURRENT_CHECKS) {
      this.throttle.refund(account, client, this.now());
      return { kind: 'busy' };
    }
    this.checksInFlight++;
    let ok: boolean;
    try {
      const digest = user?.password ?? (await (this.dummy ??= hashPassword(randomBytes(16).toString('hex'))));
      ok = await verifyPassword(password, digest);
    } finally {
      this.checksInFlight--;
    }
    // A failure keeps its token (so does a check that threw); only a right password gives it back.
    if (!ok || user === undefined) return { kind: 'failed', reason: user === undefined ? 'unknown_account' : 'wrong_password', user };
    // A disabled account answers like a wrong password: the form tells nobody which accounts exist.
    if (isDisabled(user)) return { kind: 'failed', reason: 'disabled_account', user };
    this.throttle.refund(account, client, this.now());
    this.throttle.succeeded(account, client, this.now());
    const nowMs = this.now();
    const minted = mintSessionToken();
    const session: SessionRecord = {
      sessionId: minted.sessionId,
      userId: user.userId,
      orgId: user.orgId,
      secretHash: minted.secretHash,
      createdAtMs: nowMs,
      lastSeenAtMs: nowMs,
      idleTimeoutMs: this.idleTimeoutMs,
      expiresAtMs: nowMs + this.maxAgeMs,
      revokedAtMs: null,
      revokedReason: null,
    };
    await this.store.root.transaction(() => {
      const live: SessionRecord[] = [];
      for (const id of indexRange(this.store, `${SESSIONS_BY_USER}/${user.userId}`)) {
        const s = this.store.sessions.get(id);
        if (s === undefined || sessionEnded(s, nowMs) !== null) {
          this.store.sessions.removeSync(id);
          this.store.index.removeSync(`${SESSIONS_BY_USER}/${user.userId}/${id}`);
        } else {
          live.push(s);
        }
      }
      live.sort((a, b) => a.createdAtMs - b.createdAtMs);
      for (const s of live.slice(0, Math.max(0, live.length - MAX_SESSIONS_PER_USER + 1))) {
        this.store.sessions.putSync(s.sessionId, { ...s, revokedAtMs: nowMs, revokedReason: 'superseded' });
      }
      this.store.sessions.putSync(session.sessionId, session);
      this.store.index.putSync(`${SESSIONS_BY_USER}/${user.userId}/${session.sessionId}`, true);
    });
    return { kind: 'ok', user, session, token: minted.token, csrfToken: minted.csrfToken };
  }

  /**
   * Authenticates a request by its session cookie.
   * @param cookieHeader the raw Cookie header
   * @param csrfToken the `X-CSRF-Token` header
   * @param stateChanging true for methods that change state (POST, PUT, PATCH, DELETE): they need the CSRF token
   * @throws ApiError 401 `unauthorized` for a missing, malformed, unknown, ended session; 403 `csrf_failed`
   */
  verify(cookieHeader: string | undefined, csrfToken: string | undefined, stateChanging: boolean, nowMs: number): VerifiedSession {
    const raw = cookieValue(cookieHeader, SESSION_COOKIE);
    const parsed = raw === undefined ? null : parseSessionToken(raw);
    if (parsed === null) throw apiError('unauthorized');
    const session = this.sessions.get(parsed.sessionId);
    // Hash the presented secret whether or not the session exists: unknown ids cost the same.
    const ok = secretMatches(parsed.secret, session?.secretHash ?? UNKNOWN_HASH);
    if (session === undefined || !ok || sessionEnded(session, nowMs) !== null) throw apiError('unauthorized');
    const user = this.users.get(session.userId);
    if (user === undefined || user.orgId !== session.orgId || isDisabled(user)) throw apiError('unauthorized');
    if (stateChanging && !csrfMatches(csrfToken, parsed.secret)) throw apiError('csrf_failed');
    if (nowMs - session.lastSeenAtMs >= this.touchMs) this.touch(session.sessionId, nowMs);
    const auth: AuthContext = {
      actorType: 'user',
      apiKeyId: session.sessionId,
      orgId: user.orgId,
      fleetId: null,
      permissions: ROLE_PERMISSIONS[user.role],
      user: { userId: user.userId, email: user.email, role: user.role, sessionId: session.sessionId, csrfToken: csrfFor(parsed.secret) },
    };
    return { auth, session, user };
  }

  /**
   * True while session `sessionId` authenticates (not revoked, expired or idle, its user exists): for
   * holders of something the session obtained earlier (stream tickets, open telemetry streams).
   */
  usable(sessionId: string, nowMs: number): boolean {
    const s = this.sessions.get(sessionId);
    const u = s === undefined ? undefined : this.users.get(s.userId);
    return s !== undefined && sessionEnded(s, nowMs) === null && u !== undefined && !isDisabled(u);
  }

  /** Ends one session (logout). Returns false when there is no such live session. */
  async revoke(sessionId: string, reason: string, nowMs = this.now()): Promise<boolean> {
    return revokeSession(this.store, sessionId, reason, nowMs);
  }

  private touch(sessionId: string, nowMs: number): void {
    if (this.touching.has(sessionId)) return;
    this.touching.add(sessionId);
    // Read-modify-write in one transaction: a revocation written meanwhile (by any process) is kept.
    this.store.root
      .transaction(() => {
        const cur = this.store.sessions.get(sessionId);
        if (cur !== undefined && sessionEnded(cur, nowMs) === null && cur.lastSeenAtMs < nowMs) {
          this.store.sessions.putSync(sessionId, { ...cur, lastSeenAtMs: nowMs });
        }
      })
      .catch((err: unknown) => this.opts.log?.warn({ err }, 'session last-seen write failed'))
      .finally(() => this.touching.delete(sessionId));
  }
}

// Compared against when the session id is unknown (never matches a SHA-256 digest of a real secret).
const UNKNOWN_HASH = new Uint8Array(32);

/** Revokes one live session; false when it does not exist or has already ended. */
export async function revokeSession(store: Store, sessionId: string, reason: string, nowMs: number): Promise<boolean> {
  return store.root.transaction(() => {
    const s = store.sessions.get(sessionId);
    if (s === undefined || s.revokedAtMs !== null) return false;
    store.sessions.putSync(sessionId, { ...s, revokedAtMs: nowMs, revokedReason: reason });
    return true;
  });
}

/** Revokes every live session of a user (`fleetgw admin revoke-sessions`); returns how many. */
export async function revokeUserSessions(store: Store, userId: string, reason: string, nowMs: number): Promise<number> {
  return store.root.transaction(() => {
    let n = 0;
    for (const id of indexRange(store, `${SESSIONS_BY_USER}/${userId}`)) {
      const s = store.sessions.get(id);
      if (s === undefined || sessionEnded(s, nowMs) !== null) continue;
      store.sessions.putSync(id, { ...s, revokedAtMs: nowMs, revokedReason: reason });
      n++;
    }
    return n;
  });
}

/** The session record `sessionId` (live or ended), or undefined. */
export function sessionRecord(store: Pick<Store, 'sessions'>, sessionId: string): SessionRecord | undefined {
  return store.sessions.get(sessionId);
}
