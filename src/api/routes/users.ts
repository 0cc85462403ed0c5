/**
 * User administration under `/v1/orgs/{org_id}/users` (docs/sessions.md): an admin's session lists,
 * creates, disables and enables the organization's users; an API key gets 403 (`actors: 'user'`), as
 * on the key-management routes. Passwords are taken once at creation, hashed (scrypt) and never
 * answered, logged or put on a timeline. Each change is a `user.*` event and a log line.
 */
import { isDisabled, type UserRecord } from '../../auth/users/records.js';
import { orgUsers, setUserDisabled } from '../../auth/users/user-admin.js';
import { createUser, UserInputError, userRecord } from '../../auth/users/users.js';
import { requireOrg } from '../../auth/access.js';
import type { EventLog } from '../../events/index.js';
import { apiError } from '../../errors/catalog.js';
import type { Logger } from 'pino';
import type { Store } from '../../store/lmdb.js';
import { defineRoute } from '../define-route.js';
import { appendOrgEvent } from '../org-timeline.js';
import type { AuthContext, RouteDef } from '../route.js';
import { OrgPathParams } from '../schemas/api-keys.js';
import { KIB } from '../schemas/body-bounds.js';
import { MAX_USERS_LISTED, UserCreateRequest, UserList, UserPathParams, UserView } from '../schemas/users.js';

export interface UserRouteDeps {
  store: Store;
  events: EventLog;
  log?: Logger;
}

const BASE = '/v1/orgs/{org_id}/users';
const tags = ['Sessions'];
const NO_STORE = { 'cache-control': 'no-store' };

/** The public view of a user: never the password digest. */
export function userView(u: UserRecord): UserView {
  return {
    userId: u.userId,
    orgId: u.orgId,
    email: u.email,
    role: u.role,
    state: isDisabled(u) ? 'disabled' : 'active',
    createdAtMs: u.createdAtMs,
    disabledAtMs: u.disabledAtMs ?? null,
  };
}

/** The calling admin (the router lets only sessions in on these routes). */
function admin(auth: AuthContext, action: string): NonNullable<AuthContext['user']> {
  if (auth.user === undefined) throw apiError('session_required');
  if (auth.user.role !== 'admin') throw apiError('admin_required', { action });
  return auth.user;
}

/** The user-administration routes. */
export function userRoutes(deps: UserRouteDeps): RouteDef[] {
  const { store, events } = deps;
  const log = deps.log?.child({ component: 'users' });
  const userEvent = (u: UserRecord, kind: string, by: { userId: string; email: string }, atMs: number): void => {
    appendOrgEvent(events, store, { orgId: u.orgId, fleetId: null, correlationId: u.userId, kind, subject: { type: 'user', id: u.userId }, atMs, data: { email: u.email, role: u.role, by } });
    log?.info({ userId: u.userId, orgId: u.orgId, by: by.userId }, `${kind}: user`);
  };
  const toggle = (disabled: boolean) =>
    async ({ auth, params, nowMs }: { auth: AuthContext; params: { org_id: string; user_id: string }; nowMs: number }) => {
      requireOrg(auth, params.org_id);
      const by = admin(auth, disabled ? 'disable users' : 'enable users');
      if (disabled && params.user_id === by.userId) throw apiError('user_not_self');
      const before = userRecord(store, params.user_id);
      const u = await setUserDisabled(store, params.org_id, params.user_id, disabled, nowMs);
      if (u === undefined) throw apiError('user_not_found', { userId: params.user_id });
      if (before !== undefined && isDisabled(before) !== disabled) userEvent(u, disabled ? 'user.disabled' : 'user.enabled', { userId: by.userId, email: by.email }, nowMs);
      return { status: 200 as const, body: userView(u) };
    };
  const common = { tags, auth: 'any' as const, actors: 'user' as const };
  return [
    defineRoute({
      ...common,
      method: 'GET',
      path: BASE,
      operationId: 'listUsers',
      summary: `The organization's users (at most ${MAX_USERS_LISTED}), oldest first, without passwords. Admins only.`,
      params: OrgPathParams,
      errors: ['forbidden_org', 'admin_required'],
      responses: { 200: { description: 'The users.', schema: UserList } },
    }).handle(({ auth, params }) => {
      requireOrg(auth, params.org_id);
      admin(auth, 'list users');
      const out: UserList = { items: orgUsers(store, params.org_id).slice(0, MAX_USERS_LISTED).map(userView) };
      return { status: 200, body: out, headers: NO_STORE };
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: BASE,
      operationId: 'createUser',
      summary: 'Create a user of the organization with a role and a first password (never answered or logged). Admins only.',
      params: OrgPathParams,
      body: UserCreateRequest,
      maxBodyBytes: 4 * KIB,
      errors: ['forbidden_org', 'admin_required', 'user_exists'],
      responses: { 201: { description: 'Created.', schema: UserView } },
    }).handle(async ({ auth, params, body, nowMs }) => {
      requireOrg(auth, params.org_id);
      const by = admin(auth, 'create users');
      let u: UserRecord;
      try {
        u = await createUser(store, { orgId: params.org_id, email: body.email, role: body.role, password: body.password }, nowMs);
      } catch (err) {
        if (!(err instanceof UserInputError)) throw err;
        if (/already exists/.test(err.message)) throw apiError('user_exists', { email: body.email.trim().toLowerCase() });
        throw apiError('invalid_body', { detail: `email: ${err.message}` });
      }
      userEvent(u, 'user.created', { userId: by.userId, email: by.email }, nowMs);
      return { status: 201, body: userView(u), headers: NO_STORE };
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: `${BASE}/{user_id}/disable`,
      operationId: 'disableUser',
      summary: 'Disable a user: no login, and each of its sessions (and their telemetry streams) ends at once. Admins only; not oneself.',
      params: UserPathParams,
      errors: ['forbidden_org', 'admin_required', 'user_not_found', 'user_not_self'],
      responses: { 200: { description: 'The user, disabled (unchanged when it already was).', schema: UserView } },
    }).handle(toggle(true)),
    defineRoute({
      ...common,
      method: 'POST',
      path: `${BASE}/{user_id}/enable`,
      operationId: 'enableUser',
      summary: 'Enable a disabled user again (its old sessions stay ended: it logs in anew). Admins only.',
      params: UserPathParams,
      errors: ['forbidden_org', 'admin_required', 'user_not_found'],
      responses: { 200: { description: 'The user, enabled (unchanged when it already was).', schema: UserView } },
    }).handle(toggle(false)),
  ];
}
