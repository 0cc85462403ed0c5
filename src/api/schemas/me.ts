/** GET /v1/me (spec: Resources, "API key identity"). */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { named } from './named.js';

export const MeResponse = named('ApiKeyIdentity', Type.Object(
  {
    actorType: Type.Literal('api_key'),
    apiKeyId: Uuid,
    orgId: Uuid,
    fleetId: Nullable(Uuid),
    permissions: Type.Array(Type.String(), { description: 'Every permission the key carries, retired ones included.' }),
  },
  { additionalProperties: false },
));
export type MeResponse = Static<typeof MeResponse>;
