/** GET /openapi.json: the OpenAPI 3.1 contract, served without a credential (spec: Authentication 3). */
import { Type, type Static } from '@sinclair/typebox';
import { defineRoute } from '../define-route.js';
import { JsonText } from '../json-text.js';
import type { RouteDef } from '../route.js';

/** The document's schema: only its version is fixed here; the rest is the OpenAPI 3.1 meta-schema's. */
const OpenApiDocument = Type.Object({ openapi: Type.Literal('3.1.0') }, { additionalProperties: true, description: 'An OpenAPI 3.1 document.' });

/**
 * @param getDocument returns the document built at start-up from every route of the gateway (a getter
 *   because the document lists this route too, so it exists only after all routes are assembled)
 */
export function openApiRoutes(getDocument: () => object): RouteDef[] {
  // Serialized once per document object (~300 KB of JSON), not once per request.
  let cached: { doc: object; text: JsonText<Static<typeof OpenApiDocument>> } | null = null;
  return [
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'The OpenAPI 3.1 document of this gateway.',
      tags: ['Discovery'],
      auth: 'none',
      responses: { 200: { description: 'OpenAPI 3.1 document.', schema: OpenApiDocument } },
    }).handle(
      () => {
        const doc = getDocument();
        if (cached?.doc !== doc) cached = { doc, text: new JsonText(JSON.stringify(doc)) };
        return { status: 200, body: cached.text };
      },
    ),
  ];
}
