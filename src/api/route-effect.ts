/**
 * A route's effect (RouteDef.effect) as the three facts an unattended client acts on; the MCP tool
 * annotations are these facts (src/api/mcp/tool-catalog.ts).
 */
import type { RouteDef } from './route.js';

/** What a call of a route does: the MCP tool annotations' `readOnlyHint`, `destructiveHint`, `idempotentHint`. */
export interface EffectFacts {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
}

const READ_METHODS: ReadonlySet<RouteDef['method']> = new Set(['GET', 'OPTIONS']);

/**
 * The facts of `route`'s declared effect, or of its method when it declares none.
 * @throws Error when a route declared `read` needs a permission that is not a `:read` one
 */
export function effectOf(route: RouteDef): EffectFacts {
  const effect = route.effect ?? (READ_METHODS.has(route.method) ? 'read' : { changes: 'destructive', idempotent: false });
  if (effect === 'read') {
    // A route that needs a write or control permission changes something: calling it read-only would lie.
    if (route.auth !== 'any' && route.auth !== 'none' && !route.auth.endsWith(':read')) {
      throw new Error(`${route.method} ${route.path}: declared effect 'read' but needs permission ${route.auth}`);
    }
    return { readOnly: true, destructive: false, idempotent: true };
  }
  return { readOnly: false, destructive: effect.changes === 'destructive', idempotent: effect.idempotent };
}
