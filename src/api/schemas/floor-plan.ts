/** A fleet's floor plan under /v1/orgs/{org_id}/fleets/{fleet_id}/floor-plan (docs/dashboard.md). */
import { Type, type Static } from '@sinclair/typebox';
import { FLOOR_PLAN_MAX_BYTES } from '../../fleet/floor-plans/records.js';
import { Nullable, Uuid } from './common.js';
import { GEOMETRY_BODY_MAX_BYTES } from './body-bounds.js';
import { named } from './named.js';

/** Base64 length of the largest image, rounded up to whole 4-character groups. */
const MAX_BASE64_CHARS = Math.ceil(FLOOR_PLAN_MAX_BYTES / 3) * 4;
/**
 * The upload's bound: the gateway-wide 1 MiB, which the largest image in base64 (1,037,656 characters)
 * plus the JSON around it and a placement stays within.
 */
export const FLOOR_PLAN_MAX_BODY_BYTES = GEOMETRY_BODY_MAX_BYTES;

export const ReferencePoint = named('FloorPlanReferencePoint', Type.Object(
  {
    x: Type.Number({ minimum: -1e6, maximum: 1e6, description: 'Image pixel column (0 at the left edge).' }),
    y: Type.Number({ minimum: -1e6, maximum: 1e6, description: 'Image pixel row (0 at the top edge, growing down).' }),
    lat: Type.Number({ minimum: -90, maximum: 90 }),
    lon: Type.Number({ minimum: -180, maximum: 180 }),
  },
  { additionalProperties: false },
));

export const Placement = Type.Array(ReferencePoint, {
  minItems: 2,
  maxItems: 3,
  description: 'Two points (the plan is scaled, rotated and moved, never sheared) or three (any affine placement).',
});

export const FloorPlanUpload = named('FloorPlanUpload', Type.Object(
  {
    content_type: Type.Unsafe<'image/png' | 'image/svg+xml'>({ type: 'string', enum: ['image/png', 'image/svg+xml'] }),
    data_base64: Type.String({ minLength: 4, maxLength: MAX_BASE64_CHARS, pattern: '^[A-Za-z0-9+/]+={0,2}$', description: `The image, base64; at most ${FLOOR_PLAN_MAX_BYTES} bytes decoded.` }),
    placement: Type.Optional(Placement),
  },
  { additionalProperties: false },
));
export type FloorPlanUpload = Static<typeof FloorPlanUpload>;

export const PlacementBody = named('FloorPlanPlacement', Type.Object({ points: Placement }, { additionalProperties: false }));
export type PlacementBody = Static<typeof PlacementBody>;

export const FloorPlanView = named('FloorPlan', Type.Object(
  {
    fleetId: Uuid,
    contentType: Type.String(),
    bytes: Type.Integer(),
    etag: Type.String(),
    imageUrl: Type.String({ description: 'Where the image is served (ETag, 304 on revalidation).' }),
    widthPx: Nullable(Type.Number()),
    heightPx: Nullable(Type.Number()),
    placement: Nullable(Type.Array(ReferencePoint)),
    uploadedAtMs: Type.Integer(),
    uploadedBy: Type.Object({ userId: Uuid, email: Type.String() }, { additionalProperties: false }),
  },
  { additionalProperties: false },
));
export type FloorPlanView = Static<typeof FloorPlanView>;

/** `v`: the plan's ETag, so a page's image cache never shows an older upload under the same URL. */
export const ImageQuery = Type.Object(
  { v: Type.Optional(Type.String({ maxLength: 100, description: "The plan's ETag (a cache key; the image served is always the current one)." })) },
  { additionalProperties: false },
);

export const FloorPlanAnswer = named('FloorPlanAnswer', Type.Object({ plan: Nullable(FloorPlanView) }, { additionalProperties: false }));
export type FloorPlanAnswer = Static<typeof FloorPlanAnswer>;
