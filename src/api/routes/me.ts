/** GET /v1/me: the identity of the calling key (spec: Discovery). */
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import { MeResponse } from '../schemas/me.js';

/** Routes about the caller itself. */
export function meRoutes(): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/me',
      operationId: 'getMe',
      summary: 'Identity, organization, fleet binding and permissions of the calling API key (or user session: apiKeyId is then the session id).',
      tags: ['Discovery'],
      auth: 'any',
      responses: { 200: { description: 'The key identity.', schema: MeResponse } },
    }).handle(
      ({ auth }) => {
        const body: MeResponse = {
          actorType: auth.actorType,
          apiKeyId: auth.apiKeyId,
          orgId: auth.orgId,
          fleetId: auth.fleetId,
          permissions: [...auth.permissions],
          ...(auth.user !== undefined ? { user: { userId: auth.user.userId, email: auth.user.email, role: auth.user.role } } : {}),
        };
        return { status: 200, body };
      },
    ),
  ];
}
