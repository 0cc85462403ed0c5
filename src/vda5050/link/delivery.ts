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
 * What a send of an id that is not in the robot's latest state does:
 * - `publish`: first publication in this process, or a state read after the last one did not show it
 *   (the message was lost);
 * - `ask`: no state was read since the last publication: the robot may simply not have answered yet,
 *   so it is asked for its state (a lost message shows at the next state) rather than sent it twice;
 * - `withhold`: issued before this process started and not repeatable: the previous process may have
 *   published it and the robot ended it and dropped it from `actionStates` (vda-5050-lib does after 5
 *   states), so a second copy could be a second physical action. It is never published by this
 *   process; a state that still shows it acknowledges it, else its retry budget runs out.
 */
export type ResendPlan = 'publish' | 'ask' | 'withhold';

/**
 * The plan for one send (see {@link ResendPlan}). `statesRead`: the robot's count of states read by
 * this process; `issuedBeforeStart`: the command was issued before this process started.
 */
export function resendPlan(w: Awaiting | undefined, statesRead: number, issuedBeforeStart: boolean, kind: 'action' | 'order', actionType: string): ResendPlan {
  if (w === undefined) return issuedBeforeStart && !isRepeatable(kind, actionType) ? 'withhold' : 'publish';
  if (w.withheld) return 'withhold';
  // Counted, not timed: a state read in the same turn (or millisecond) as the publication is not after it.
  return statesRead > w.publishedAtState ? 'publish' : 'ask';
}

export interface Awaiting {
  commandId: string;
  kind: 'action' | 'order';
  actionType: string;
  sinceMs: number;
  /** The robot's count of states read when this id was last published. */
  publishedAtState: number;
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
   * Waits for `id`, published for `commandId` when the robot's count of states read was
   * `statesRead` (or withheld: never published by this process); an entry already there is updated.
   */
  add(id: string, commandId: string, kind: 'action' | 'order', actionType: string, nowMs: number, statesRead: number, withheld = false): void {
    const w = this.byId.get(id);
    if (w !== undefined) {
      w.publishedAtState = statesRead;
      w.withheld = withheld;
      return;
    }
    if (this.byId.size >= MAX_AWAITING_PER_ROBOT) this.byId.delete(this.byId.keys().next().value!);
    this.byId.set(id, { commandId, kind, actionType, sinceMs: nowMs, publishedAtState: statesRead, withheld });
  }

  /** Stops waiting for `id`. */
  forget(id: string): void {
    this.byId.delete(id);
  }

  /** The commands this state decides (forgotten here), and drops entries past their time. */
  settle(state: VdaState, nowMs: number): Array<{ commandId: string; verdict: Verdict }> {
    const out: Array<{ commandId: string; verdict: Verdict }> = [];
    for (const [id, w] of this.byId) {
      const verdict = verdictOf(state, id, w.kind, w.actionType);
      if (verdict !== null) {
        out.push({ commandId: w.commandId, verdict });
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
