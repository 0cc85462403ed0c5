/** GET /openapi.json: the OpenAPI 3.1 contract, served without a credential (spec: Authentication 3). */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../define-route.js';
import { PreparedJson } from '../prepared-body.js';
import type { RouteDef } from '../route.js';

/** The document's schema: only its version is fixed here; the rest is the OpenAPI 3.1 meta-schema's. */
const OpenApiDocument = Type.Object({ openapi: Type.Literal('3.1.0') }, { additionalProperties: true, description: 'An OpenAPI 3.1 document.' });

/**
 * @param getDocument returns the document built at start-up from every route of the gateway (a getter
 *   because the document lists this route too, so it exists only after all routes are assembled)
 */
export function openApiRoutes(getDocument: () => object): RouteDef[] {
  // Serialized and compressed once per document object (~300 KB of JSON), not once per request; the
  // router answers If-None-Match with 304 and sends the Brotli or gzip form the client accepts.
  let cached: { doc: object; body: Promise<PreparedJson<Static<typeof OpenApiDocument>>> } | null = null;
  return [
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'The OpenAPI 3.1 document of this gateway.',
      tags: ['Discovery'],
      auth: 'none',
      responses: {
        200: { description: 'OpenAPI 3.1 document, with a strong ETag; Brotli or gzip when the client accepts it.', schema: OpenApiDocument },
        304: { description: 'Not modified: the If-None-Match header names the current ETag.' },
      },
    }).handle(
      async () => {
        const doc = getDocument();
        if (cached?.doc !== doc) cached = { doc, body: PreparedJson.of(JSON.stringify(doc)) };
        return { status: 200, body: await cached.body };
      },
    ),
  ];
}
