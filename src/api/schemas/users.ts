/** User administration under /v1/orgs/{org_id}/users (docs/sessions.md): admins only. */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_PASSWORD_BYTES, MIN_PASSWORD_CHARS } from '../../auth/users/password.js';
import { Nullable, Uuid } from './common.js';
import { named } from './named.js';
import { RoleName } from './sessions.js';

export const UserPathParams = Type.Object({ org_id: Uuid, user_id: Uuid }, { additionalProperties: false });

export const UserView = named('User', Type.Object(
  {
    userId: Uuid,
    orgId: Uuid,
    email: Type.String(),
    role: RoleName,
    state: Type.Unsafe<'active' | 'disabled'>({ type: 'string', enum: ['active', 'disabled'] }),
    createdAtMs: Type.Integer(),
    disabledAtMs: Nullable(Type.Integer()),
  },
  { additionalProperties: false },
));
export type UserView = Static<typeof UserView>;

export const UserList = named('UserList', Type.Object({ items: Type.Array(UserView) }, { additionalProperties: false }));
export type UserList = Static<typeof UserList>;

export const UserCreateRequest = named('UserCreateRequest', Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    role: RoleName,
    password: Type.String({
      minLength: MIN_PASSWORD_CHARS,
      maxLength: MAX_PASSWORD_BYTES,
      description: `The first password, at least ${MIN_PASSWORD_CHARS} characters and at most ${MAX_PASSWORD_BYTES} bytes; never shown or logged.`,
    }),
  },
  { additionalProperties: false },
));
export type UserCreateRequest = Static<typeof UserCreateRequest>;

/** The largest user list answered (an organization's people, not its robots). */
export const MAX_USERS_LISTED = 1000;
