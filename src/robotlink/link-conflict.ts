/**
 * Link conflicts: two live processes using one robot's credentials (a cloned token). Without this
 * the registry's "a newer connection replaces the current one" rule makes them replace each other a
 * few times a second, and stops land on whichever machine happens to hold the link.
 *
 * Telling a clone from a reconnect. Each connection has an identity: the `instance_id` its agent
 * sends in Hello (random per agent process), or, for agents that send none, its peer address
 * (`ip:port`, one per connection). A Hello whose identity equals the live session's is a reconnect
 * of the same process (a network blip the gateway has not noticed yet) and simply replaces it. A
 * Hello from another identity while a session is live is a takeover: allowed (a robot restarted
 * before the gateway noticed its old connection die), and the replaced identity is remembered as
 * displaced for `windowMs`. The conflict rule:
 *
 * - a displaced identity coming back within `windowMs` while another one is live (only a process
 *   that is still running comes back), or
 * - the `takeoverLimit`-th takeover of a live session within `windowMs` (agents without an
 *   instance id that open a new connection each time), or
 * - a connection that was replaced by another connection with the SAME identity coming back within
 *   `windowMs` (two clones sending one instance id, e.g. derived from a cloned machine id). An agent
 *   keeps its HTTP/2 connection across a replaced stream, so the replaced connection's peer address
 *   returning proves that connection was still open and healthy; a genuine reconnect after a blip
 *   comes from a new connection and the old one, dead or half-open, never sends another Hello.
 *
 * starts a conflict: the newcomer is refused and the live session keeps the link (no more
 * flapping). While conflicted, every connection from another identity than the live one is refused,
 * and, for the same-identity rule, every connection from a peer known to be the clone's;
 * when the live session ends, the next connection (any identity) holds the link. The conflict clears
 * once no connection was refused for `clearAfterMs` (the other process stopped, or its token was
 * re-minted), after which the rule starts afresh.
 *
 * Bounds: one history per robot that had a takeover within the window or is conflicted (robots
 * only reach this after authenticating, so at most the registered robots; expired histories are
 * swept once more than {@link SWEEP_AT} exist); at most {@link MAX_DISPLACED} displaced identities
 * and `takeoverLimit` takeover times per robot, and at most {@link MAX_DISPLACED} displaced peers
 * (oldest dropped). One unref'd timer per conflict.
 */
import type { LinkConflictCleared, LinkConflictReport, LinkConflictView } from '../protocol/robot-link.js';

/** Who a connection is, for conflict detection. */
export interface ConnectionIdentity {
  /** `instance:<id>` from the Hello, or `peer:<ip:port>` for an agent that sends no instance id. */
  key: string;
  instanceId: string | null;
  peer: string;
}

export interface LinkConflictOptions {
  /** How long a displaced identity (and a takeover) counts (default 30 s). */
  windowMs?: number;
  /** The takeover of a live session that starts a conflict, counting within the window (default 3). */
  takeoverLimit?: number;
  /** A conflict clears after this long without a refused connection (default 60 s). */
  clearAfterMs?: number;
  now?: () => number;
}

export const DEFAULT_LINK_CONFLICT = { windowMs: 30_000, takeoverLimit: 3, clearAfterMs: 60_000 } as const;
const MAX_DISPLACED = 8;
const SWEEP_AT = 1024;

/** What to do with a Hello. */
export type HelloVerdict =
  | { admit: true }
  | { admit: false; /** Set when this Hello started the conflict. */ started: LinkConflictReport | null };

interface Conflict {
  fleetId: string;
  /** The refused clone's peer when both send one identity (same-identity rule), else null. */
  clonePeer: string | null;
  /** Replaced (never mutated) on each change, so readers can compare by reference. */
  view: LinkConflictView;
  timer: NodeJS.Timeout | null;
}

interface History {
  /** Identity key -> when its live session was taken over. Insertion order = age. */
  displaced: Map<string, number>;
  takeovers: number[];
  /** `<identity key>@<peer>` -> when that connection was replaced by another one with the same identity. */
  displacedPeers: Map<string, number>;
  conflict: Conflict | null;
}

/** Per-robot conflict state and the rule above; the registry asks it on every Hello. */
export class LinkConflictTracker {
  private readonly histories = new Map<string, History>();
  private readonly windowMs: number;
  private readonly takeoverLimit: number;
  private readonly clearAfterMs: number;
  private readonly now: () => number;

  constructor(
    opts: LinkConflictOptions,
    private readonly onCleared: (robotId: string, cleared: LinkConflictCleared) => void,
  ) {
    this.windowMs = opts.windowMs ?? DEFAULT_LINK_CONFLICT.windowMs;
    this.takeoverLimit = Math.max(2, opts.takeoverLimit ?? DEFAULT_LINK_CONFLICT.takeoverLimit);
    this.clearAfterMs = opts.clearAfterMs ?? DEFAULT_LINK_CONFLICT.clearAfterMs;
    this.now = opts.now ?? ((): number => Date.now());
  }

  /** The robot's current conflict, or null. The same object until something changes. */
  conflict(robotId: string): LinkConflictView | null {
    return this.histories.get(robotId)?.conflict?.view ?? null;
  }

  /**
   * Decides on a Hello from `newcomer` while `live` holds the robot's link (null: nobody does).
   * An admitted newcomer replaces `live`; a refused one must be ended by the caller.
   */
  admit(robotId: string, fleetId: string, newcomer: ConnectionIdentity, live: ConnectionIdentity | null): HelloVerdict {
    const at = this.now();
    if (this.histories.size > SWEEP_AT) this.sweep(at);
    let h = this.histories.get(robotId);
    if (h) this.prune(h, at);
    if (live === null) return { admit: true };
    const sameIdentity = live.key === newcomer.key;
    // The same connection opening a new stream (its previous one was replaced or ended).
    if (sameIdentity && live.peer === newcomer.peer) return { admit: true };
    if (h?.conflict) {
      const c = h.conflict;
      // The holder's own reconnect from a new connection (after a blip) is admitted, unless that peer is the clone's.
      if (sameIdentity && c.clonePeer !== newcomer.peer) return { admit: true };
      c.view = { ...c.view, refusedConnections: c.view.refusedConnections + 1, lastRefusedAtMs: at };
      return { admit: false, started: null };
    }
    if (!h) {
      h = { displaced: new Map(), takeovers: [], displacedPeers: new Map(), conflict: null };
      this.histories.set(robotId, h);
    }
    if (sameIdentity) {
      const returnedAt = h.displacedPeers.get(`${newcomer.key}@${newcomer.peer}`);
      if (returnedAt === undefined) {
        remember(h.displacedPeers, `${live.key}@${live.peer}`, at);
        return { admit: true };
      }
      return { admit: false, started: this.start(robotId, fleetId, h, at, 'instance_shared', returnedAt, live, newcomer) };
    }
    const returnedAt = h.displaced.get(newcomer.key);
    if (returnedAt === undefined && h.takeovers.length + 1 < this.takeoverLimit) {
      remember(h.displaced, live.key, at);
      h.takeovers.push(at);
      return { admit: true };
    }
    const rule = returnedAt !== undefined ? 'displaced_returned' : 'repeated_takeover';
    return { admit: false, started: this.start(robotId, fleetId, h, at, rule, returnedAt ?? h.takeovers[0] ?? at, live, newcomer) };
  }

  // `suspectSinceMs`: the takeover that began what the conflict proves (commands since may have reached either process).
  private start(
    robotId: string, fleetId: string, h: History, at: number, rule: LinkConflictReport['rule'], suspectSinceMs: number,
    live: ConnectionIdentity, newcomer: ConnectionIdentity,
  ): LinkConflictReport {
    const view: LinkConflictView = { sinceMs: at, refusedConnections: 1, lastRefusedAtMs: at };
    h.conflict = { fleetId, view, clonePeer: rule === 'instance_shared' ? newcomer.peer : null, timer: null };
    this.armClear(robotId, h.conflict, this.clearAfterMs);
    return {
      fleetId,
      sinceMs: at,
      suspectSinceMs,
      rule,
      holder: { instanceId: live.instanceId, peer: live.peer },
      refused: { instanceId: newcomer.instanceId, peer: newcomer.peer },
      clearAfterMs: this.clearAfterMs,
    };
  }

  /** Stops every clear timer (server shutdown). */
  close(): void {
    for (const h of this.histories.values()) {
      if (h.conflict?.timer) clearTimeout(h.conflict.timer);
      if (h.conflict) h.conflict.timer = null;
    }
  }

  // One timer per conflict, re-armed for the remaining quiet time instead of reset on every refusal.
  private armClear(robotId: string, c: Conflict, ms: number): void {
    c.timer = setTimeout(() => {
      c.timer = null;
      const h = this.histories.get(robotId);
      if (h?.conflict !== c) return;
      const at = this.now();
      const quiet = at - c.view.lastRefusedAtMs;
      if (quiet < this.clearAfterMs) {
        this.armClear(robotId, c, this.clearAfterMs - quiet);
        return;
      }
      // Start afresh: identities displaced before or during the conflict do not count any more.
      this.histories.delete(robotId);
      this.onCleared(robotId, { fleetId: c.fleetId, sinceMs: c.view.sinceMs, clearedAtMs: at, refusedConnections: c.view.refusedConnections });
    }, Math.max(1, ms));
    c.timer.unref();
  }

  private prune(h: History, at: number): void {
    for (const map of [h.displaced, h.displacedPeers]) {
      for (const [key, when] of map) {
        if (at - when < this.windowMs) break;
        map.delete(key);
      }
    }
    while (h.takeovers.length > 0 && at - (h.takeovers[0] as number) >= this.windowMs) h.takeovers.shift();
  }

  private sweep(at: number): void {
    for (const [robotId, h] of this.histories) {
      this.prune(h, at);
      if (!h.conflict && h.displaced.size === 0 && h.displacedPeers.size === 0 && h.takeovers.length === 0) this.histories.delete(robotId);
    }
  }
}

// Most recent last; at most MAX_DISPLACED entries (oldest dropped).
function remember(map: Map<string, number>, key: string, at: number): void {
  map.delete(key);
  map.set(key, at);
  if (map.size > MAX_DISPLACED) map.delete(map.keys().next().value as string);
}
