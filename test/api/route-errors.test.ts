/**
 * Static side of "every error a route can return is published": each catalog error a
 * route module throws itself (`apiError('<id>'` in src/api/routes/<file>.ts) must be in the published
 * `x-errors` of an operation that module declares. Errors thrown deeper (access checks, the command
 * service, mission modules) are checked live by test/e2e/contract.test.ts, which fails on any error
 * an operation returns without publishing it. Also: every route of the gateway is declared with
 * defineRoute (typed handler), and operationIds are string literals (so this scan finds them).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isDefinedRoute } from '../../src/api/define-route.js';
import { DECLARATIONS } from '../../src/commands/catalog/index.js';
import { offlineOpenApiDocument, withOfflineRoutes } from '../../src/gateway/openapi-document.js';

const ROUTES_DIR = fileURLToPath(new URL('../../src/api/routes/', import.meta.url));

describe('published route errors (static)', () => {
  it('each error a route module throws is published by an operation of that module', async () => {
    const doc = (await offlineOpenApiDocument()) as { paths: Record<string, Record<string, { operationId: string; 'x-errors': string[] }>> };
    const errorsOf = new Map<string, string[]>();
    for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) errorsOf.set(op.operationId, op['x-errors']);

    const problems: string[] = [];
    const declared = new Set<string>();
    for (const file of readdirSync(ROUTES_DIR).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(ROUTES_DIR, file), 'utf8');
      expect(text, `${file}: operationId must be a string literal`).not.toMatch(/operationId: `/);
      // Pages and files for browsers are not API operations and not in the document (RouteDef.browserAsset);
      // their answers are checked by test/e2e/browser-conventions.test.ts.
      if ([...text.matchAll(/operationId: '/g)].length === [...text.matchAll(/browserAsset: true/g)].length && /browserAsset: true/.test(text)) continue;
      const literal = [...text.matchAll(/operationId: '(\w+)'|(?:read|update): '(\w+)'/g)].map((m) => m[1] ?? m[2]!);
      // Route modules that build one operation per command declaration (src/commands/catalog) name
      // their operations there, not in the file.
      const derived = [
        ...(/NESTED_COMMAND_ROUTES/.test(text) ? DECLARATIONS.flatMap((d) => (d.route ? [d.route.operationId] : [])) : []),
        ...(/d\.exchange/.test(text) ? DECLARATIONS.flatMap((d) => (d.exchange ? [d.exchange.readOperationId, d.exchange.updateOperationId] : [])) : []),
      ];
      const ops = [...literal, ...derived].filter((id) => errorsOf.has(id));
      ops.forEach((id) => declared.add(id));
      const published = new Set(ops.flatMap((id) => errorsOf.get(id)!));
      for (const m of text.matchAll(/apiError\('(\w+)'/g)) {
        if (!published.has(m[1]!)) problems.push(`${file}: throws ${m[1]!}, published by none of ${ops.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
    // The scan saw every operation of the document.
    expect([...errorsOf.keys()].filter((id) => !declared.has(id))).toEqual([]);
  });

  it('every gateway route is declared with defineRoute (its handler typed by its schemas)', async () => {
    const untyped = await withOfflineRoutes(({ routes }) => routes.filter((r) => !isDefinedRoute(r)).map((r) => r.operationId));
    expect(untyped).toEqual([]);
  });
});
