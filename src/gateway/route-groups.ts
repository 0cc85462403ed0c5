/**
 * The routes the plugins declare (plugin.ts `routes()`), collected by the composer as each plugin
 * starts and composed once by the http plugin into the one list the router serves, /openapi.json
 * describes and the MCP tools come from.
 */
import type { RouteDef } from '../api/route.js';
import { ROUTE_GROUP_ORDER } from './api-info.js';

/** Routes of one concern of a plugin (one file of src/api/routes), named for the layout. */
export interface RouteGroup {
  /** Unique across the gateway; its place in ROUTE_GROUP_ORDER (api-info.ts) orders the served list. */
  readonly name: string;
  readonly routes: readonly RouteDef[];
}

/** One route group per name, in ROUTE_GROUP_ORDER; groups it does not name follow, in the given order. */
export function orderRouteGroups(groups: readonly RouteGroup[]): RouteGroup[] {
  const seen = new Set<string>();
  for (const g of groups) {
    if (seen.has(g.name)) throw new Error(`two route groups are named '${g.name}'`);
    seen.add(g.name);
  }
  const rank = (g: RouteGroup): number => {
    const i = ROUTE_GROUP_ORDER.indexOf(g.name);
    return i < 0 ? ROUTE_GROUP_ORDER.length : i;
  };
  // Array.prototype.sort is stable: unnamed groups keep the order they were declared in.
  return [...groups].sort((a, b) => rank(a) - rank(b));
}

/**
 * The route groups of the started plugins. The http plugin takes them once, when it starts; a plugin
 * that declares routes after that (one the http plugin does not depend on) is a wiring error, refused
 * naming it rather than leaving its routes unserved.
 */
export class DeclaredRoutes {
  private readonly groups: RouteGroup[] = [];
  private takenBy: string | undefined;

  /** Records the groups `plugin` declared after its start. */
  add(plugin: string, groups: readonly RouteGroup[]): void {
    if (groups.length === 0) return;
    if (this.takenBy !== undefined) {
      throw new Error(`plugin '${plugin}' declares routes but starts after ${this.takenBy} composed them: make ${this.takenBy} depend on it`);
    }
    this.groups.push(...groups);
  }

  /** Every group declared so far, in declaration order; later declarations are refused (see the class comment). */
  take(by: string): readonly RouteGroup[] {
    this.takenBy = by;
    return this.groups;
  }
}
