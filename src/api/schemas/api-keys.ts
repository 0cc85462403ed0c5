/** API-key management under /v1/orgs/{org_id}/api-keys (docs/sessions.md). */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';
import { PermissionName } from './sessions.js';

/** Longest key lifetime a user may ask for: ten years. */
export const MAX_KEY_LIFETIME_S = 10 * 365 * 24 * 3600;

export const OrgPathParams = Type.Object({ org_id: Uuid }, { additionalProperties: false });
export const ApiKeyPathParams = Type.Object({ org_id: Uuid, api_key_id: Uuid }, { additionalProperties: false });

export const ApiKeyCreateRequest = named('ApiKeyCreateRequest', Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'What the key is for (shown in lists).' })),
    fleet_id: Type.Optional(Nullable(Uuid)),
    permissions: Type.Array(PermissionName, { minItems: 1, maxItems: 32, uniqueItems: true, description: 'At most the creating user\'s role\'s permissions.' }),
    expires_in_s: Type.Optional(Type.Integer({ minimum: 60, maximum: MAX_KEY_LIFETIME_S, description: 'Lifetime in seconds; absent: no expiry.' })),
  },
  { additionalProperties: false },
));
export type ApiKeyCreateRequest = Static<typeof ApiKeyCreateRequest>;

export const ApiKeyView = named('ApiKey', Type.Object(
  {
    apiKeyId: Uuid,
    orgId: Uuid,
    fleetId: Nullable(Uuid),
    name: Nullable(Type.String()),
    permissions: Type.Array(Type.String(), { description: 'As stored (keys made by `fleetgw admin` may carry retired ones).' }),
    state: Type.Unsafe<'active' | 'revoked' | 'expired'>({ type: 'string', enum: ['active', 'revoked', 'expired'] }),
    createdAtMs: Type.Integer(),
    expiresAtMs: Nullable(Type.Integer()),
    revokedAtMs: Nullable(Type.Integer()),
    createdBy: Nullable(Type.Object({ userId: Uuid, email: Type.String() }, { additionalProperties: false, description: 'null: made by `fleetgw admin`.' })),
  },
  { additionalProperties: false },
));
export type ApiKeyView = Static<typeof ApiKeyView>;

export const ApiKeyCreated = named('ApiKeyCreated', Type.Object(
  {
    key: ApiKeyView,
    secret: Type.String({ description: 'The raw key (`fgk_…`) for `Authorization: Bearer`. Shown only in this response.' }),
  },
  { additionalProperties: false },
));
export type ApiKeyCreated = Static<typeof ApiKeyCreated>;

export const ApiKeyCreateReplay = named('ApiKeyCreateReplay', Type.Object(
  {
    key: ApiKeyView,
    secretWithheld: Type.Literal(true, { description: 'A replay: the key exists as created, its secret was shown once and is never shown again.' }),
  },
  { additionalProperties: false },
));
export type ApiKeyCreateReplay = Static<typeof ApiKeyCreateReplay>;

export const API_KEYS_LIMIT: ListLimit = { default: 100, max: 1000 };

export const ApiKeyListQuery = Type.Object(
  { limit: Type.Optional(LimitParam(API_KEYS_LIMIT)), cursor: Type.Optional(CursorParam()) },
  { additionalProperties: false },
);
export type ApiKeyListQuery = Static<typeof ApiKeyListQuery>;

export const ApiKeyList = Page('ApiKeyList', ApiKeyView, 'Oldest first (creation time, then apiKeyId).');
export type ApiKeyList = Static<typeof ApiKeyList>;
