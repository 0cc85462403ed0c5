/**
 * Delivery over VDA 5050 (docs/vda5050.md, "Delivery"). MQTT runs at QoS 0 and a robot answers no
 * message directly, so a command counts as received only when the robot's own `state` shows it: its
 * action id in `actionStates`, or its order id as the state's `orderId`. Until then the command
 * service resends it on its usual schedule, and every send first looks at the latest state: an id
 * the robot already shows is acknowledged, not published again (exactly once by id, also after a
 * gateway or broker restart, where the link takes a robot online only with its first state).
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
    // cancel (a release of a robot with no order), a startPause of a robot already paused.
    if (error?.errorType === 'noOrderToCancel' || (actionType === 'startPause' && state.paused)) return { received: true };
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


interface Awaiting {
  commandId: string;
  kind: 'action' | 'order';
  actionType: string;
  sinceMs: number;
}

/** One robot's published ids waiting to show in its state. */
export class AwaitedIds {
  private readonly byId = new Map<string, Awaiting>();

  get size(): number {
    return this.byId.size;
  }

  /** Starts (or keeps) waiting for `id`, published for `commandId`. */
  add(id: string, commandId: string, kind: 'action' | 'order', actionType: string, nowMs: number): void {
    if (this.byId.has(id)) return;
    if (this.byId.size >= MAX_AWAITING_PER_ROBOT) this.byId.delete(this.byId.keys().next().value!);
    this.byId.set(id, { commandId, kind, actionType, sinceMs: nowMs });
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
