/** GET /v1/me (spec: Resources, "API key identity"). */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { named } from './named.js';
import { UserIdentity } from './sessions.js';

export const MeResponse = named('ApiKeyIdentity', Type.Object(
  {
    actorType: Type.Union([Type.Literal('api_key'), Type.Literal('user')], { description: '`user`: a user session (cookie), see `user`.' }),
    apiKeyId: Uuid,
    orgId: Uuid,
    fleetId: Nullable(Uuid),
    permissions: Type.Array(Type.String(), { description: 'Every permission the key carries, retired ones included (a session: its role\'s).' }),
    user: Type.Optional(UserIdentity),
  },
  { additionalProperties: false },
));
export type MeResponse = Static<typeof MeResponse>;
