/**
 * Route lookup by path segments: a trie of the templates' segments, so a request costs one map
 * lookup per segment instead of trying every template in turn.
 *
 * Precedence is the one of sorting templates by specificity (path-template.ts): at each segment a
 * literal is tried before a parameter, so `/v1/agent/control-robot` wins over `/v1/agent/{tool}`
 * whatever the declared order; among routes on the same template, declared order. The first route
 * whose template matches and whose method is the request's wins; the methods of templates that matched
 * before it are what a 405 lists in `Allow`.
 */
import { decodeSegment, type CompiledPath } from './path-template.js';

interface Leaf<R> {
  method: string;
  route: R;
  paramNames: readonly string[];
}

interface Node<R> {
  literals: Map<string, Node<R>>;
  param: Node<R> | null;
  leaves: Leaf<R>[];
}

/** Outcome of {@link RouteTable.match}: the route and its decoded parameters, or the methods allowed. */
export type RouteMatch<R> = { route: R; params: Record<string, string> } | { route: null; allowed: string[] };

const newNode = <R>(): Node<R> => ({ literals: new Map(), param: null, leaves: [] });

export class RouteTable<R> {
  private readonly root: Node<R> = newNode();

  /** Adds a route; call in declaration order (it breaks ties between routes on one template). */
  add(method: string, path: CompiledPath, route: R): void {
    let node = this.root;
    for (const part of path.parts) {
      if ('param' in part) {
        node.param ??= newNode();
        node = node.param;
      } else {
        let next = node.literals.get(part.literal);
        if (next === undefined) {
          next = newNode();
          node.literals.set(part.literal, next);
        }
        node = next;
      }
    }
    node.leaves.push({ method, route, paramNames: path.paramNames });
  }

  /** Finds the route for `method` and `path` (no query string). */
  match(method: string, path: string): RouteMatch<R> {
    const segments = path.split('/');
    const allowed: string[] = [];
    // segments[0] is the empty string before the leading slash.
    if (segments[0] === '') {
      const values: string[] = [];
      const found = this.walk(this.root, segments, 1, method, values, allowed);
      if (found !== null) {
        const params: Record<string, string> = {};
        for (let i = 0; i < found.paramNames.length; i++) params[found.paramNames[i]!] = values[i]!;
        return { route: found.route, params };
      }
    }
    return { route: null, allowed };
  }

  private walk(node: Node<R>, segments: string[], i: number, method: string, values: string[], allowed: string[]): Leaf<R> | null {
    if (i === segments.length) {
      for (const leaf of node.leaves) {
        if (leaf.method === method) return leaf;
        if (!allowed.includes(leaf.method)) allowed.push(leaf.method);
      }
      return null;
    }
    const seg = segments[i]!;
    const literal = node.literals.get(seg);
    if (literal !== undefined) {
      const found = this.walk(literal, segments, i + 1, method, values, allowed);
      if (found !== null) return found;
    }
    if (node.param !== null && seg !== '') {
      const decoded = decodeSegment(seg);
      if (decoded !== null) {
        values.push(decoded);
        const found = this.walk(node.param, segments, i + 1, method, values, allowed);
        if (found !== null) return found;
        values.pop();
      }
    }
    return null;
  }
}
