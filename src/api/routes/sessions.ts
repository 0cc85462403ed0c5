/**
 * User sessions (docs/sessions.md): `POST /v1/sessions` (login: session cookie + CSRF token),
 * `GET /v1/sessions/current`, `DELETE /v1/sessions/current` (logout).
 *
 * Failed logins are throttled per account and per address (src/auth/users/login-throttle.ts); each
 * failure for a known account is an operator log line and a `user.login_failed` event on the user's
 * organization's fleet timelines (no password, no cookie, ever). A failure for an unknown email is
 * logged without the email: people type passwords into the email field.
 */
import type { EventLog } from '../../events/index.js';
import { apiError } from '../../errors/catalog.js';
import type { SessionRecord, UserRecord } from '../../auth/users/records.js';
import { ROLE_PERMISSIONS } from '../../auth/users/roles.js';
import { SESSION_COOKIE } from '../../auth/users/session-token.js';
import type { Store } from '../../store/lmdb.js';
import { defineRoute } from '../define-route.js';
import { appendOrgEvent } from '../org-timeline.js';
import type { AuthContext, RouteDef } from '../route.js';
import { LoginRequest, SessionInfo, type SessionView } from '../schemas/sessions.js';
import type { Logger } from 'pino';
import { KIB } from '../schemas/body-bounds.js';
import { sessionRecord, type SessionService } from '../../auth/users/sessions.js';
import { userRecord } from '../../auth/users/users.js';

export interface SessionRouteDeps {
  store: Store;
  events: EventLog;
  sessions: SessionService;
  /** The gateway serves HTTPS: the cookie gets `Secure`. */
  secureCookies: boolean;
  log?: Logger;
}

const tags = ['Sessions'];
const NO_STORE = { 'cache-control': 'no-store' };

/** The public view of a session. */
export function sessionView(s: SessionRecord, u: UserRecord): SessionView {
  return {
    sessionId: s.sessionId,
    user: { userId: u.userId, email: u.email, role: u.role },
    orgId: s.orgId,
    permissions: [...ROLE_PERMISSIONS[u.role]],
    createdAtMs: s.createdAtMs,
    lastSeenAtMs: s.lastSeenAtMs,
    idleTimeoutS: Math.round(s.idleTimeoutMs / 1000),
    expiresAtMs: s.expiresAtMs,
  };
}

/** The caller's session identity; the router guarantees one on `actors: 'user'` routes. */
function sessionOf(auth: AuthContext): NonNullable<AuthContext['user']> {
  if (auth.user === undefined) throw apiError('session_required');
  return auth.user;
}

/** The session routes. */
export function sessionRoutes(deps: SessionRouteDeps): RouteDef[] {
  const { store, events, sessions } = deps;
  const log = deps.log?.child({ component: 'sessions' });
  const cookie = (value: string, maxAgeS: number): string =>
    `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${deps.secureCookies ? '; Secure' : ''}`;
  const userEvent = (u: UserRecord, kind: string, atMs: number, data: Record<string, unknown>): void => {
    appendOrgEvent(events, store, { orgId: u.orgId, fleetId: null, correlationId: u.userId, kind, subject: { type: 'user', id: u.userId }, atMs, data: { email: u.email, ...data } });
  };
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/sessions',
      operationId: 'createSession',
      summary: 'Log in with email and password: sets the session cookie and returns the CSRF token for calls other than GET.',
      tags,
      auth: 'none',
      body: LoginRequest,
      maxBodyBytes: 8 * KIB,
      errors: ['login_failed', 'login_throttled', 'unavailable'],
      responses: { 201: { description: 'Logged in; `Set-Cookie` carries the session (HttpOnly, SameSite=Strict, Secure over HTTPS).', schema: SessionInfo } },
    }).handle(
      async ({ body, client, nowMs }) => {
        const outcome = await sessions.login(body.email, body.password, client);
        switch (outcome.kind) {
          case 'busy':
            throw apiError('unavailable', { what: 'Login' }, { headers: { 'retry-after': '1' } });
          case 'throttled': {
            const { retryAfterS, bound } = outcome;
            throw apiError('login_throttled', { bound, retryAfterS }, { headers: { 'retry-after': String(retryAfterS) }, details: { bound, retryAfterS } });
          }
          case 'failed': {
            if (outcome.user === undefined) {
              log?.warn({ client }, 'login failed: unknown account');
            } else {
              log?.warn({ client, userId: outcome.user.userId }, `login failed: ${outcome.reason === 'disabled_account' ? 'account disabled' : 'wrong password'}`);
              userEvent(outcome.user, 'user.login_failed', nowMs, { reason: outcome.reason, client });
            }
            throw apiError('login_failed');
          }
          case 'ok': {
            const { user, session, token, csrfToken } = outcome;
            userEvent(user, 'user.login', nowMs, { sessionId: session.sessionId, client });
            const maxAgeS = Math.max(1, Math.floor((session.expiresAtMs - nowMs) / 1000));
            const out: SessionInfo = { session: sessionView(session, user), csrfToken };
            return { status: 201, body: out, headers: { ...NO_STORE, 'set-cookie': cookie(token, maxAgeS) } };
          }
        }
      },
    ),
    defineRoute({
      method: 'GET',
      path: '/v1/sessions/current',
      operationId: 'getCurrentSession',
      summary: 'The calling session: user, role, permissions, expiry, and its CSRF token again (e.g. after a page reload).',
      tags,
      auth: 'any',
      actors: 'user',
      responses: { 200: { description: 'The session.', schema: SessionInfo } },
    }).handle(
      ({ auth }) => {
        const me = sessionOf(auth);
        const s = sessionRecord(store, me.sessionId);
        const u = userRecord(store, me.userId);
        if (s === undefined || u === undefined) throw apiError('unauthorized');
        const out: SessionInfo = { session: sessionView(s, u), csrfToken: me.csrfToken };
        return { status: 200, body: out, headers: NO_STORE };
      },
    ),
    defineRoute({
      method: 'DELETE',
      path: '/v1/sessions/current',
      operationId: 'deleteCurrentSession',
      summary: 'Log out: ends the calling session at once (every later request with its cookie is 401) and clears the cookie.',
      tags,
      auth: 'any',
      actors: 'user',
      responses: { 204: { description: 'Logged out.' } },
    }).handle(
      async ({ auth, nowMs }) => {
        const me = sessionOf(auth);
        await sessions.revoke(me.sessionId, 'logout', nowMs);
        const u = userRecord(store, me.userId);
        if (u !== undefined) userEvent(u, 'user.logout', nowMs, { sessionId: me.sessionId });
        return { status: 204, body: null, headers: { ...NO_STORE, 'set-cookie': cookie('', 0) } };
      },
    ),
  ];
}
