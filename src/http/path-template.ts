/**
 * OpenAPI-style path templates (`/v1/robots/{robot_id}`), the same text the OpenAPI document
 * publishes, so a route cannot be documented under one path and served under another.
 */

/** One segment of a template: a literal to equal, or a parameter taking one whole non-empty segment. */
export type PathPart = { readonly param: string } | { readonly literal: string };

export interface CompiledPath {
  readonly template: string;
  readonly paramNames: readonly string[];
  /** The template's segments after the leading `/` (route-table.ts builds its trie from them). */
  readonly parts: readonly PathPart[];
  /** One char per segment, 'a' literal, 'b' parameter: sorting by it tries literal segments first. */
  readonly specificity: string;
  /** Decoded parameters when `path` matches, else null. */
  match(path: string): Record<string, string> | null;
}

const PARAM = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/**
 * Compiles a template into a segment matcher. A parameter matches one whole non-empty segment.
 * @throws Error for a template that does not start with `/` or repeats a parameter name
 */
export function compilePath(template: string): CompiledPath {
  if (!template.startsWith('/')) throw new Error(`path template must start with '/': ${template}`);
  const segments = template.split('/').slice(1);
  const parts = segments.map((seg): PathPart => {
    const name = PARAM.exec(seg)?.[1];
    return name !== undefined ? { param: name } : { literal: seg };
  });
  const paramNames = parts.flatMap((p) => ('param' in p ? [p.param] : []));
  if (new Set(paramNames).size !== paramNames.length) throw new Error(`repeated parameter in ${template}`);

  return {
    template,
    paramNames,
    parts,
    specificity: parts.map((p) => ('param' in p ? 'b' : 'a')).join(''),
    match(path: string): Record<string, string> | null {
      const got = path.split('/');
      // got[0] is the empty string before the leading slash.
      if (got.length !== parts.length + 1 || got[0] !== '') return null;
      const params: Record<string, string> = {};
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i]!;
        const seg = got[i + 1]!;
        if ('literal' in part) {
          if (seg !== part.literal) return null;
          continue;
        }
        if (seg === '') return null;
        const decoded = decodeSegment(seg);
        if (decoded === null) return null;
        params[part.param] = decoded;
      }
      return params;
    },
  };
}

/** A path segment with %-escapes decoded; null when the escapes are malformed. */
export function decodeSegment(seg: string): string | null {
  // Most ids carry no escape at all: skip decodeURIComponent (same result, no call).
  if (!seg.includes('%')) return seg;
  try {
    return decodeURIComponent(seg);
  } catch {
    // Malformed %-escapes: the segment matches no parameter, so the request gets the catalog's 404;
    // the caller's input is at fault, not the gateway, and a log line per bad path would invite floods.
    return null;
  }
}
