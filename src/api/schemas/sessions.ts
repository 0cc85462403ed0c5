/** User sessions: POST /v1/sessions, GET and DELETE /v1/sessions/current (docs/sessions.md). */
import { Type, type Static } from '@sinclair/typebox';
import { LIVE_PERMISSIONS } from '../../auth/permissions.js';
import { ROLES } from '../../auth/users/roles.js';
import { Uuid } from './common.js';
import { named } from './named.js';

export const RoleName = named('Role', Type.Unsafe<(typeof ROLES)[number]>({
  type: 'string',
  enum: [...ROLES],
  description: 'A user\'s role; each grants a fixed permission set (docs/sessions.md).',
}));

export const PermissionName = named('Permission', Type.Unsafe<(typeof LIVE_PERMISSIONS)[number]>({
  type: 'string',
  enum: [...LIVE_PERMISSIONS],
  description: 'A live permission (spec: Authentication, Permissions). Retired ones cannot be granted here.',
}));

export const LoginRequest = named('LoginRequest', Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
));
export type LoginRequest = Static<typeof LoginRequest>;

export const UserIdentity = named('UserIdentity', Type.Object(
  { userId: Uuid, email: Type.String(), role: RoleName },
  { additionalProperties: false },
));

export const SessionView = named('Session', Type.Object(
  {
    sessionId: Uuid,
    user: UserIdentity,
    orgId: Uuid,
    permissions: Type.Array(PermissionName, { description: 'What the session may do: its user\'s role\'s permissions.' }),
    createdAtMs: Type.Integer(),
    lastSeenAtMs: Type.Integer({ description: 'Last request on record (written at most once a minute).' }),
    idleTimeoutS: Type.Integer({ description: 'The session ends this long after its last request.' }),
    expiresAtMs: Type.Integer({ description: 'Absolute end, whatever the activity.' }),
  },
  { additionalProperties: false },
));
export type SessionView = Static<typeof SessionView>;

export const SessionInfo = named('SessionInfo', Type.Object(
  {
    session: SessionView,
    csrfToken: Type.String({ description: 'Send as `X-CSRF-Token` on every call other than GET made with the session cookie.' }),
  },
  { additionalProperties: false },
));
export type SessionInfo = Static<typeof SessionInfo>;
