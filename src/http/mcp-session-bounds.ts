/**
 * Who gets an MCP session when a bound is full (docs/mcp.md, "Sessions"): the three bounds
 * (credential, organization, gateway) and which open session, if any, is closed to make room for a
 * new one. Pure: the session table (mcp-sessions.ts) owns the sessions and closes the one named here.
 *
 * Only work keeps a session in use: a request other than `ping` (notifications do nothing either).
 * A session with no request running and no work for `idleMs` is idle. Room is made by closing:
 * - for the credential's own bound, its least recently worked session without a request running (a
 *   client that forgets DELETE evicts its own sessions, nobody else's);
 * - for the organization's and the gateway's, an idle session only, from whoever holds the most
 *   sessions in that scope (the credential within the organization, the organization within the
 *   gateway), its least recently worked first: a large holder pays before a small one, and a session
 *   in use is never closed for someone else.
 * With nothing to close, the new session is refused with the time until one could be.
 */
/** Bounds and times of the MCP session table (set from the tunables `FLEETGW_MCP_*`: src/gateway/mcp.ts). */
export interface McpSessionLimits {
  /** Sessions in all (the gateway-wide bound). */
  maxSessions: number;
  /** Sessions per organization. */
  maxPerOrg: number;
  /** Sessions per credential (API key, or a person's login session). */
  maxPerOwner: number;
  /** A session without work for this long is idle: the first closed when another needs room (ms). */
  idleMs: number;
  /** A session without work for this long is closed, pings notwithstanding (ms). */
  timeoutMs: number;
}

/** What the bounds look at in a session. */
export interface BoundedSession {
  owner: string;
  org: string;
  /** Last time a request other than ping started or ended (ms). */
  lastWorkMs: number;
  /** Requests running now. */
  busy: number;
}

/** The bound a new session would break. */
export type McpSessionBound = 'credential' | 'organization' | 'gateway';

/** Room for a new session of `owner` in `org`: nothing to do, one session to close, or a refusal. */
export type Room<S> = { kind: 'free' } | { kind: 'evict'; session: S; bound: McpSessionBound } | { kind: 'refused'; bound: McpSessionBound; max: number; retryAfterS: number };

/** Whether `message` is work: a JSON-RPC request other than `ping`. */
export function isWork(message: unknown): boolean {
  const m = message as { method?: unknown; id?: unknown } | null;
  return typeof m?.method === 'string' && m.method !== 'ping' && m.id !== undefined;
}

/**
 * Decides how a new session of `owner` in `org` fits: the first full bound (credential, then
 * organization, then gateway) names one session to close, or refuses. Call again after closing it:
 * one close always frees a slot in every bound while the table is within them.
 */
export function roomFor<S extends BoundedSession>(sessions: Iterable<S>, owner: string, org: string, limits: McpSessionLimits, nowMs: number): Room<S> {
  const all = [...sessions];
  const mine = all.filter((s) => s.owner === owner);
  if (mine.length >= limits.maxPerOwner) {
    const victim = leastRecentlyWorked(mine.filter((s) => s.busy === 0));
    // Only requests in progress hold them: one ends soon.
    return victim === undefined ? { kind: 'refused', bound: 'credential', max: limits.maxPerOwner, retryAfterS: 1 } : { kind: 'evict', session: victim, bound: 'credential' };
  }
  const ours = all.filter((s) => s.org === org);
  if (ours.length >= limits.maxPerOrg) return idleOfLargest(ours, (s) => s.owner, 'organization', limits.maxPerOrg, limits.idleMs, nowMs);
  if (all.length >= limits.maxSessions) return idleOfLargest(all, (s) => s.org, 'gateway', limits.maxSessions, limits.idleMs, nowMs);
  return { kind: 'free' };
}

function leastRecentlyWorked<S extends BoundedSession>(sessions: S[]): S | undefined {
  let out: S | undefined;
  for (const s of sessions) if (out === undefined || s.lastWorkMs < out.lastWorkMs) out = s;
  return out;
}

/** The least recently worked idle session of the group holding the most sessions in `scope`, or a refusal. */
function idleOfLargest<S extends BoundedSession>(scope: S[], groupOf: (s: S) => string, bound: McpSessionBound, max: number, idleMs: number, nowMs: number): Room<S> {
  const sizes = new Map<string, number>();
  for (const s of scope) sizes.set(groupOf(s), (sizes.get(groupOf(s)) ?? 0) + 1);
  const cutoff = nowMs - idleMs;
  let victim: S | undefined;
  let victimSize = 0;
  for (const s of scope) {
    if (s.busy > 0 || s.lastWorkMs > cutoff) continue;
    const size = sizes.get(groupOf(s)) ?? 0;
    if (victim === undefined || size > victimSize || (size === victimSize && s.lastWorkMs < victim.lastWorkMs)) {
      victim = s;
      victimSize = size;
    }
  }
  if (victim !== undefined) return { kind: 'evict', session: victim, bound };
  // The first to turn idle: a running request counts as work that ends now at the earliest.
  let soonestMs = nowMs + idleMs;
  for (const s of scope) soonestMs = Math.min(soonestMs, (s.busy > 0 ? nowMs : s.lastWorkMs) + idleMs);
  return { kind: 'refused', bound, max, retryAfterS: Math.max(1, Math.ceil((soonestMs - nowMs) / 1000)) };
}
