/**
 * The authenticated caller, resolved from an API key or a user's session cookie: what every
 * authorization check (access.ts) and every audit entry reads.
 */
import type { Role } from './users/roles.js';

export interface AuthContext {
  actorType: 'api_key' | 'user';
  /**
   * The credential the request acts as: the API key's id, or for a user session the session's id.
   * Rate limits, idempotency scopes, command audit entries (`requestedBy.apiKeyId`), stream tickets
   * and schedules (the credential they act as) key on it (docs/sessions.md).
   */
  apiKeyId: string;
  orgId: string;
  /** Fleet the key is bound to, or null for an org-wide key (a user session is always org-wide). */
  fleetId: string | null;
  permissions: readonly string[];
  /**
   * The person behind a session (`actorType: 'user'`); absent for an API key. `csrfToken` is the
   * session's CSRF token (derived from its cookie: src/auth/users/session-token.ts), handed back by
   * `GET /v1/sessions/current`.
   */
  user?: { userId: string; email: string; role: Role; sessionId: string; csrfToken: string };
}
