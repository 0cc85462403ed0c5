/**
 * Delivery over VDA 5050 (docs/vda5050.md, "Delivery"). MQTT runs at QoS 0 and a robot answers no
 * message directly, so a command counts as received only when the robot's own `state` shows it: its
 * action id in `actionStates`, or its order id as the state's `orderId`. Until then the command
 * service resends it on its usual schedule, and every send first looks at the latest state: an id
 * the robot already shows is acknowledged, not published again. A resend publishes again only when a
 * state read after the last publish still does not show the id ({@link resendPlan}): a robot slower
 * than the resend interval is asked for its state instead of being sent the command twice.
 */
import type { VdaError, VdaState } from './messages.js';

/** What the robot's state says about a published id. */
export type Verdict = { received: true } | { received: false; reason: string };

/** Entries kept per robot; past it the oldest is forgotten (its next resend tracks it again). */
export const MAX_AWAITING_PER_ROBOT = 1024;
/** An entry not seen in a state for this long is forgotten (the command service's resends are over by then). */
export const AWAIT_TTL_MS = 120_000;

/** The robot's verdict on an action or order id, or null when its state does not show it (yet). */
export function verdictOf(state: VdaState, id: string, kind: 'action' | 'order', actionType = ''): Verdict | null {
  if (kind === 'action') {
    const a = state.actionStates.find((s) => s.actionId === id);
    if (a !== undefined && a.actionStatus !== 'FAILED') return { received: true };
    const error = errorAbout(state, 'actionId', id);
    if (a === undefined && error === undefined) return null;
    // Refusals that leave the robot where the command wanted it: a cancelOrder with no order to
    // cancel (a release of a robot with no order), a startPause of a robot already paused, a
    // stopPause of a robot not paused.
    if (error?.errorType === 'noOrderToCancel' || (actionType === 'startPause' && state.paused) || (actionType === 'stopPause' && !state.paused)) {
      return { received: true };
    }
    return { received: false, reason: error !== undefined ? describe(error) : a!.resultDescription || 'action FAILED' };
  }
  if (state.orderId === id) return { received: true };
  const refused = reasonOf(state, 'orderId', id);
  return refused === null ? null : { received: false, reason: refused };
}

/** The error the state holds about this id. */
function errorAbout(state: VdaState, key: string, id: string): VdaError | undefined {
  return state.errors.find((err) => err.errorReferences.some((r) => r.referenceKey === key && r.referenceValue === id));
}

function describe(e: VdaError): string {
  return `${e.errorType}: ${e.errorDescription}`.slice(0, 512);
}

/** The description of an error the state holds about this id, or null. */
function reasonOf(state: VdaState, key: string, id: string): string | null {
  const e = errorAbout(state, key, id);
  return e === undefined ? null : describe(e);
}


/**
 * Instant actions a robot may be sent again whatever it did with the first copy: a repeat leaves it
 * where the first one did (a paused robot refuses `startPause` as already paused, a robot without an
 * order refuses `cancelOrder` with `noOrderToCancel`, both read as received), or asks for nothing but
 * a report. Orders are in the same class: a robot discards an order whose `orderId` and
 * `orderUpdateId` it already has.
 */
export const REPEATABLE_ACTIONS: ReadonlySet<string> = new Set(['startPause', 'stopPause', 'cancelOrder', 'stateRequest', 'factsheetRequest']);

/** Whether a second copy of this publication is harmless to the robot ({@link REPEATABLE_ACTIONS}). */
export function isRepeatable(kind: 'action' | 'order', actionType: string): boolean {
  return kind === 'order' || REPEATABLE_ACTIONS.has(actionType);
}

/**
 * Whether a copy of a command from before this process started may be published though the robot's
 * state does not show it: the repeatable instant actions only. An order is not: the robot may have
 * driven it and taken others since, and would drive it again. A start cannot undo a stop issued after
 * it (the robot's stop mark, stop-marks.ts, outlives the process); a release may cancel an order the
 * robot took after it, which leaves the robot standing (docs/vda5050.md, "Limits").
 */
export function isRepeatableAfterRestart(kind: 'action' | 'order', actionType: string): boolean {
  return kind === 'action' && REPEATABLE_ACTIONS.has(actionType);
}

/**
 * Where a robot's link stood when something was published: states read, and the link epoch, which
 * moves whenever a message to the robot may have been lost (its session or master control's ended,
 * or master control dropped a message to it at a bound). Over one live MQTT connection nothing is
 * lost, so a command is known lost only when the epoch moved.
 */
export interface LinkPoint {
  states: number;
  epoch: number;
}

/**
 * What a send of an id that is not in the robot's latest state does:
 * - `publish`: first publication in this process; or the link epoch moved since the last one (it may
 *   have been lost); or, for a repeatable command, a state read after the last one did not show it;
 * - `ask`: the robot may simply not have listed it yet (a robot may list an action only when it
 *   starts it, and answer a state request at once): it is asked for its state rather than sent a
 *   second copy, which for an action like a pick would be a second pick;
 * - `withhold`: issued before this process started and not repeatable: the previous process may have
 *   published it and the robot ended it and dropped it from `actionStates` (vda-5050-lib does after 5
 *   states), so a second copy could be a second physical action. It is never published by this
 *   process; a state that still shows it acknowledges it, else its retry budget runs out.
 */
export type ResendPlan = 'publish' | 'ask' | 'withhold';

/**
 * The plan for one send (see {@link ResendPlan}). `now`: where the robot's link stands;
 * `issuedBeforeStart`: the command was issued before this process started.
 */
export function resendPlan(w: Awaiting | undefined, now: LinkPoint, issuedBeforeStart: boolean, kind: 'action' | 'order', actionType: string): ResendPlan {
  if (w === undefined) return issuedBeforeStart && !isRepeatableAfterRestart(kind, actionType) ? 'withhold' : 'publish';
  if (w.withheld) return 'withhold';
  if (now.epoch > w.publishedAt.epoch) return 'publish';
  // Counted, not timed: a state read in the same turn (or millisecond) as the publication is not after it.
  return isRepeatable(kind, actionType) && now.states > w.publishedAt.states ? 'publish' : 'ask';
}

export interface Awaiting {
  commandId: string;
  kind: 'action' | 'order';
  actionType: string;
  sinceMs: number;
  /** Where the robot's link stood when this id was last published. */
  publishedAt: LinkPoint;
  /** Never published by this process ({@link ResendPlan} `withhold`). */
  withheld: boolean;
}

/** One robot's published ids waiting to show in its state. */
export class AwaitedIds {
  private readonly byId = new Map<string, Awaiting>();

  get size(): number {
    return this.byId.size;
  }

  /** What is known of `id`, if it is awaited. */
  get(id: string): Awaiting | undefined {
    return this.byId.get(id);
  }

  /**
   * Waits for `id`, published for `commandId` when the robot's link stood at `at` (or withheld: never
   * published by this process); an entry already there is updated.
   */
  add(id: string, commandId: string, kind: 'action' | 'order', actionType: string, nowMs: number, at: LinkPoint, withheld = false): void {
    const w = this.byId.get(id);
    if (w !== undefined) {
      w.publishedAt = { ...at };
      w.withheld = withheld;
      return;
    }
    if (this.byId.size >= MAX_AWAITING_PER_ROBOT) this.byId.delete(this.byId.keys().next().value!);
    this.byId.set(id, { commandId, kind, actionType, sinceMs: nowMs, publishedAt: { ...at }, withheld });
  }

  /** Stops waiting for `id`. */
  forget(id: string): void {
    this.byId.delete(id);
  }

  /** The commands this state decides (forgotten here), and drops entries past their time. */
  settle(state: VdaState, nowMs: number): Array<{ commandId: string; actionType: string; verdict: Verdict }> {
    const out: Array<{ commandId: string; actionType: string; verdict: Verdict }> = [];
    for (const [id, w] of this.byId) {
      const verdict = verdictOf(state, id, w.kind, w.actionType);
      if (verdict !== null) {
        out.push({ commandId: w.commandId, actionType: w.actionType, verdict });
        this.byId.delete(id);
      } else if (nowMs - w.sinceMs > AWAIT_TTL_MS) {
        this.byId.delete(id);
      }
    }
    return out;
  }

  clear(): void {
    this.byId.clear();
  }
}
