/**
 * Decisions every served route must declare (the list `composeServedRoutes` gives the router): a
 * state-changing route takes an `Idempotency-Key` or is on the documented exception list; a route
 * with a body declares its own body bound.
 */
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_EXEMPT, isStateChanging } from '../../src/api/idempotent-routes.js';
import { GEOMETRY_BODY_MAX_BYTES } from '../../src/api/schemas/body-bounds.js';
import { withOfflineRoutes } from '../../src/gateway/openapi-document.js';
import { maxJsonBytes } from '../support/json-size.js';

describe('route declarations', () => {
  it('every state-changing route declares Idempotency-Key or is a documented exception', async () => {
    const { undeclared, exempt, published } = await withOfflineRoutes(({ routes, openapi }) => {
      const paths = openapi.paths as Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
      const writes = routes.filter(isStateChanging);
      return {
        undeclared: writes.filter((r) => r.idempotencyKey === undefined && !IDEMPOTENCY_EXEMPT.has(`${r.method} ${r.path}`)).map((r) => `${r.method} ${r.path}`),
        exempt: writes.filter((r) => IDEMPOTENCY_EXEMPT.has(`${r.method} ${r.path}`)).map((r) => `${r.method} ${r.path}`),
        published: writes
          .filter((r) => r.idempotencyKey !== undefined)
          .filter((r) => !(paths[r.path]?.[r.method.toLowerCase()]?.parameters ?? []).some((p) => p.in === 'header' && p.name === 'Idempotency-Key'))
          .map((r) => `${r.method} ${r.path}`),
      };
    });
    expect(undeclared).toEqual([]);
    expect(published, 'declared in /openapi.json as a header parameter').toEqual([]);
    // The exception list names served routes only (a stale entry would hide nothing but mislead).
    expect(exempt.sort()).toEqual([...IDEMPOTENCY_EXEMPT.keys()].sort());
  });

  it('the command routes take the key', async () => {
    const declared = await withOfflineRoutes(({ routes }) => new Map(routes.map((r) => [`${r.method} ${r.path}`, r.idempotencyKey])));
    for (const route of ['POST /v1/agent/control-robot', 'POST /v1/orgs/{org_id}/fleets/{fleet_id}/stop-all', 'POST /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/mode', 'POST /v1/agent/control-mission']) {
      expect(declared.get(route), route).toBeDefined();
    }
  });

  it('every route with a body declares its own bound, at least the largest body its schema admits', async () => {
    const rows = await withOfflineRoutes(({ routes }) =>
      routes.filter((r) => r.body !== undefined).map((r) => ({ route: `${r.method} ${r.path}`, declared: r.maxBodyBytes, largest: maxJsonBytes(r.body) })));
    expect(rows.length).toBeGreaterThan(30);
    expect(rows.filter((r) => r.declared === undefined).map((r) => r.route), 'routes with a body and no maxBodyBytes').toEqual([]);
    // Geometry routes are bounded only loosely by their schema: they keep the gateway-wide limit.
    const tooSmall = rows.filter((r) => r.largest <= GEOMETRY_BODY_MAX_BYTES && (r.declared ?? 0) < r.largest);
    expect(tooSmall, 'declared below the largest valid body').toEqual([]);
    const unbounded = rows.filter((r) => r.largest > GEOMETRY_BODY_MAX_BYTES && r.declared !== GEOMETRY_BODY_MAX_BYTES).map((r) => r.route);
    expect(unbounded, 'loosely bounded bodies keep the geometry bound').toEqual([]);
  });
});
