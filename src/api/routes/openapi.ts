/** GET /openapi.json: the OpenAPI 3.1 contract, served without a credential (spec: Authentication 3). */
import { Type } from '@sinclair/typebox';
import type { RouteDef } from '../route.js';

/**
 * @param getDocument returns the document built at start-up from every route of the gateway (a getter
 *   because the document lists this route too, so it exists only after all routes are assembled)
 */
export function openApiRoutes(getDocument: () => object): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'The OpenAPI 3.1 document of this gateway.',
      tags: ['Discovery'],
      auth: 'none',
      responses: {
        200: {
          description: 'OpenAPI 3.1 document.',
          schema: Type.Object({ openapi: Type.String() }, { additionalProperties: true }),
        },
      },
      handler: () => ({ status: 200, body: getDocument() }),
    },
  ];
}
