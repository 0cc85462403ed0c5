/**
 * Request body bounds shared by several routes (RouteDef.maxBodyBytes). Each route declares its own
 * bound beside its body schema, from the largest body the schema admits plus headroom for escapes
 * and whitespace; docs/http-hardening.md tables them. These are the common sizes.
 */

export const KIB = 1024;

/**
 * Bodies that carry GeoJSON geometry (features, field rules, tracked objects): a polygon's ring may
 * hold thousands of vertices, which the schema bounds only loosely, so these keep the gateway-wide
 * limit (FLEETGW_MAX_BODY_BYTES, 1 MiB by default, which caps every route's bound).
 */
export const GEOMETRY_BODY_MAX_BYTES = 1024 * KIB;

/**
 * The MCP endpoint: a JSON-RPC message carries any tool's arguments, the largest of which (a field
 * rule's geometry) is {@link GEOMETRY_BODY_MAX_BYTES}; the tool's own route applies its own bound when
 * the call is dispatched.
 */
export const MCP_BODY_MAX_BYTES = GEOMETRY_BODY_MAX_BYTES;
