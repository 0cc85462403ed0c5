/**
 * A fleet's floor plan (docs/dashboard.md): an admin uploads a PNG or SVG (bounded, checked by its
 * bytes, kept in LMDB) and places it on the map by two or three reference points; everyone who may
 * read the fleet reads it. The image is served with a strong ETag (304 on revalidation) and, being
 * possibly an SVG, with a CSP that runs nothing and `nosniff`: it is only ever an image.
 */
import { createHash } from 'node:crypto';
import { requireFleet, requireOrg } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { checkImage } from '../../fleet/floor-plans/image.js';
import { floorPlanOf, placeFloorPlan, removeFloorPlan, saveFloorPlan } from '../../fleet/floor-plans/plans.js';
import { FLOOR_PLAN_MAX_BYTES, type FloorPlanRecord, type ReferencePoint } from '../../fleet/floor-plans/records.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { defineRoute } from '../define-route.js';
import { PreparedAsset } from '../prepared-body.js';
import type { AuthContext, RouteDef } from '../route.js';
import { KIB } from '../schemas/body-bounds.js';
import { FLOOR_PLAN_MAX_BODY_BYTES, FloorPlanAnswer, FloorPlanUpload, FloorPlanView, ImageQuery, PlacementBody } from '../schemas/floor-plan.js';
import { FleetPathParams } from '../schemas/features.js';

export interface FloorPlanRouteDeps {
  store: Store;
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
}

const BASE = '/v1/orgs/{org_id}/fleets/{fleet_id}/floor-plan';
const tags = ['Features'];
/** The image's headers: an SVG opened on its own runs no script, loads nothing, and is never sniffed. */
const IMAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  'x-content-type-options': 'nosniff',
  'content-disposition': 'inline; filename="floor-plan"',
};
/** Prepared images kept (one per fleet shown at once is the usual case). */
const PREPARED_KEPT = 16;
/** Reference points closer than this (pixels, or metres on the ground) cannot place a plan. */
const MIN_SPAN = 1;

/** The public view of a floor plan: the image itself is at `imageUrl`. */
function view(p: FloorPlanRecord): FloorPlanView {
  return {
    fleetId: p.fleetId,
    contentType: p.contentType,
    bytes: p.bytes.byteLength,
    etag: p.etag,
    imageUrl: `/v1/orgs/${p.orgId}/fleets/${p.fleetId}/floor-plan/image`,
    widthPx: p.widthPx,
    heightPx: p.heightPx,
    placement: p.placement,
    uploadedAtMs: p.uploadedAtMs,
    uploadedBy: p.uploadedBy,
  };
}

/** The calling admin: floor plans change what every operator sees, so only admins change them. */
function admin(auth: AuthContext): { userId: string; email: string } {
  if (auth.user === undefined) throw apiError('session_required');
  if (auth.user.role !== 'admin') throw apiError('admin_required', { action: 'change the floor plan' });
  return { userId: auth.user.userId, email: auth.user.email };
}

/**
 * Refuses points that cannot place a plan: two at the same pixel or the same spot, or three on one line.
 * @throws ApiError `floor_plan_placement_degenerate`
 */
export function checkPlacement(points: ReferencePoint[]): void {
  const metres = (a: ReferencePoint, b: ReferencePoint): number => {
    const dy = (b.lat - a.lat) * 111_320;
    const dx = (b.lon - a.lon) * 111_320 * Math.cos((a.lat * Math.PI) / 180);
    return Math.hypot(dx, dy);
  };
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      const a = points[i]!;
      const b = points[j]!;
      if (Math.hypot(b.x - a.x, b.y - a.y) < MIN_SPAN) throw apiError('floor_plan_placement_degenerate', { detail: `points ${i + 1} and ${j + 1} are the same image pixel` });
      if (metres(a, b) < MIN_SPAN * 0.01) throw apiError('floor_plan_placement_degenerate', { detail: `points ${i + 1} and ${j + 1} are the same place` });
    }
  }
  if (points.length === 3) {
    const [a, b, c] = points as [ReferencePoint, ReferencePoint, ReferencePoint];
    const area = (b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y);
    if (Math.abs(area) < MIN_SPAN) throw apiError('floor_plan_placement_degenerate', { detail: 'the three image points are on one line' });
  }
}

/** The floor-plan routes. */
export function floorPlanRoutes(deps: FloorPlanRouteDeps): RouteDef[] {
  const { store, identity } = deps;
  // Prepared once per stored version (ETag and compressed forms), a few fleets' worth.
  const prepared = new Map<string, Promise<PreparedAsset>>();
  const preparedOf = (p: FloorPlanRecord): Promise<PreparedAsset> => {
    const key = `${p.fleetId}/${p.etag}`;
    let hit = prepared.get(key);
    if (hit === undefined) {
      hit = PreparedAsset.of(p.bytes, p.contentType, 'private, no-cache');
      prepared.set(key, hit);
      while (prepared.size > PREPARED_KEPT) prepared.delete(prepared.keys().next().value!);
    }
    return hit;
  };
  const planOf = (auth: AuthContext, params: FleetPathParams): FloorPlanRecord => {
    requireOrg(auth, params.org_id);
    const fleet = requireFleet(identity, auth, params.fleet_id);
    const p = floorPlanOf(store, fleet.fleetId);
    if (p === undefined) throw apiError('floor_plan_not_found', { fleetId: fleet.fleetId });
    return p;
  };
  return [
    defineRoute({
      method: 'GET',
      path: BASE,
      operationId: 'getFloorPlan',
      summary: "The fleet's floor plan: its type, size, ETag, image URL and placement (reference points); `plan` null when the fleet has none.",
      tags,
      auth: 'fleet:read',
      params: FleetPathParams,
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet'],
      responses: { 200: { description: 'The floor plan, or null.', schema: FloorPlanAnswer } },
    }).handle(({ auth, params }) => {
      requireOrg(auth, params.org_id);
      const p = floorPlanOf(store, requireFleet(identity, auth, params.fleet_id).fleetId);
      // A fleet without a plan is an ordinary state, not a missing resource: the map then draws the
      // features and field rules alone.
      const out: FloorPlanAnswer = { plan: p === undefined ? null : view(p) };
      return { status: 200, body: out };
    }),
    defineRoute({
      method: 'GET',
      path: `${BASE}/image`,
      operationId: 'getFloorPlanImage',
      summary: "The floor plan's image (PNG or SVG) with a strong ETag; If-None-Match answers 304. SVG is served as an image only (a CSP that runs nothing).",
      tags,
      auth: 'fleet:read',
      params: FleetPathParams,
      query: ImageQuery,
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'floor_plan_not_found'],
      responses: { 200: { description: 'The image.', contentType: 'image/png', alsoContentTypes: ['image/svg+xml'] }, 304: { description: 'Not modified.' } },
    }).handle(async ({ auth, params }) => ({ status: 200, body: await preparedOf(planOf(auth, params)), headers: IMAGE_HEADERS })),
    defineRoute({
      method: 'PUT',
      path: BASE,
      operationId: 'putFloorPlan',
      summary: `Upload the fleet's floor plan (PNG or SVG, at most ${FLOOR_PLAN_MAX_BYTES} bytes, base64), replacing any; optionally with its placement. Admins only.`,
      tags,
      auth: 'fleet:write',
      actors: 'user',
      params: FleetPathParams,
      body: FloorPlanUpload,
      maxBodyBytes: FLOOR_PLAN_MAX_BODY_BYTES,
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'admin_required', 'floor_plan_not_image', 'floor_plan_too_large', 'floor_plan_placement_degenerate'],
      responses: { 200: { description: 'Stored.', schema: FloorPlanView } },
    }).handle(async ({ auth, params, body, nowMs }) => {
      requireOrg(auth, params.org_id);
      const fleet = requireFleet(identity, auth, params.fleet_id);
      const by = admin(auth);
      const bytes = new Uint8Array(Buffer.from(body.data_base64, 'base64'));
      if (bytes.byteLength > FLOOR_PLAN_MAX_BYTES) throw apiError('floor_plan_too_large', { limit: FLOOR_PLAN_MAX_BYTES });
      const size = checkImage(body.content_type, bytes);
      if (size === null) throw apiError('floor_plan_not_image', { contentType: body.content_type });
      if (body.placement !== undefined) checkPlacement(body.placement);
      const record: FloorPlanRecord = {
        fleetId: fleet.fleetId,
        orgId: fleet.orgId,
        contentType: body.content_type,
        bytes,
        etag: `"sha256-${createHash('sha256').update(bytes).digest('base64url')}"`,
        ...size,
        placement: body.placement ?? floorPlanOf(store, fleet.fleetId)?.placement ?? null,
        uploadedAtMs: nowMs,
        uploadedBy: by,
      };
      await saveFloorPlan(store, record);
      return { status: 200, body: view(record) };
    }),
    defineRoute({
      method: 'PUT',
      path: `${BASE}/placement`,
      operationId: 'putFloorPlanPlacement',
      summary: 'Place the floor plan on the map by two or three reference points (image pixel to latitude/longitude). Admins only.',
      tags,
      auth: 'fleet:write',
      actors: 'user',
      params: FleetPathParams,
      body: PlacementBody,
      maxBodyBytes: 2 * KIB,
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'admin_required', 'floor_plan_not_found', 'floor_plan_placement_degenerate'],
      responses: { 200: { description: 'Placed.', schema: FloorPlanView } },
    }).handle(async ({ auth, params, body }) => {
      admin(auth);
      checkPlacement(body.points);
      const fleetId = planOf(auth, params).fleetId;
      const placed = await placeFloorPlan(store, fleetId, body.points);
      if (placed === undefined) throw apiError('floor_plan_not_found', { fleetId });
      return { status: 200, body: view(placed) };
    }),
    defineRoute({
      method: 'DELETE',
      path: BASE,
      operationId: 'deleteFloorPlan',
      summary: "Remove the fleet's floor plan (the map then draws features and field rules alone). Admins only.",
      tags,
      auth: 'fleet:write',
      actors: 'user',
      params: FleetPathParams,
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'admin_required', 'floor_plan_not_found'],
      responses: { 204: { description: 'Removed.' } },
    }).handle(async ({ auth, params }) => {
      admin(auth);
      const fleetId = planOf(auth, params).fleetId;
      if (!(await removeFloorPlan(store, fleetId))) throw apiError('floor_plan_not_found', { fleetId });
      return { status: 204, body: null };
    }),
  ];
}
