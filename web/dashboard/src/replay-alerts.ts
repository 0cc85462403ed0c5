/**
 * The alerts of time travel: the fleet's alerts unresolved at some moment of a window around the
 * cursor, read from `GET …/alerts?unresolved_from_ms&unresolved_to_ms` (docs/alerts.md), and, for
 * the cursor's time, those that were open then (opened at or before it, not resolved by it).
 */
import type { Api } from './api.js';
import type { Alert, Page } from './types.js';

/** Alerts read per window: the same minute and a half around the cursor as the positions. */
const BEHIND_MS = 30_000;
const AHEAD_MS = 60_000;
const PAGE_LIMIT = 500;
/** Pages read per window at most (2,000 alerts): past that the replay shows the newest ones. */
const MAX_PAGES = 4;

interface AlertWindow {
  fromMs: number;
  toMs: number;
  alerts: Alert[];
}

export class ReplayAlerts {
  private window: AlertWindow | null = null;
  private loading = false;
  private generation = 0;

  constructor(
    private readonly api: Api,
    private readonly base: string,
  ) {}

  /**
   * The alerts open at `t`, or null while the window holding `t` is being read (`ready` is called
   * once it is).
   */
  at(t: number, ready: () => void): Alert[] | null {
    const w = this.window;
    if (w === null || t < w.fromMs || t > w.toMs) {
      void this.read(t, ready);
      return null;
    }
    return w.alerts.filter((a) => a.openedAtMs <= t && (a.resolvedAtMs === null || a.resolvedAtMs > t));
  }

  /** Forgets the window (back to live, another day). */
  clear(): void {
    this.generation++;
    this.window = null;
    this.loading = false;
  }

  private async read(t: number, ready: () => void): Promise<void> {
    if (this.loading) return;
    this.loading = true;
    const generation = this.generation;
    const fromMs = t - BEHIND_MS;
    const toMs = Math.min(t + AHEAD_MS, Date.now());
    const alerts: Alert[] = [];
    try {
      let cursor: string | undefined;
      for (let i = 0; i < MAX_PAGES; i++) {
        const page = await this.api.get<Page<Alert>>(`${this.base}/alerts`, { unresolved_from_ms: fromMs, unresolved_to_ms: toMs, limit: PAGE_LIMIT, cursor });
        alerts.push(...page.items);
        if (page.next_cursor === null) break;
        cursor = page.next_cursor;
      }
    } catch {
      // Not read (a key without fleet:read, say): the replay shows no alert for this window.
    }
    if (generation !== this.generation) return;
    this.loading = false;
    this.window = { fromMs, toMs, alerts };
    ready();
  }
}
