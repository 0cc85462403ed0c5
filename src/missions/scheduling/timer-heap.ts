/**
 * A min-heap of (due time, key) with one live entry per key: re-arming a key supersedes its older
 * entry lazily (the stale one is skipped when it surfaces), so arm/disarm are O(log n) and O(1).
 * Size is bounded by the number of armed keys plus superseded entries, which are compacted away
 * when they outnumber the live ones.
 */
interface Entry {
  at: number;
  key: string;
  version: number;
}

export class TimerHeap {
  private heap: Entry[] = [];
  private readonly live = new Map<string, { at: number; version: number }>();
  private version = 0;

  get size(): number {
    return this.live.size;
  }

  /** Arms `key` at `at`, replacing any earlier arming of it. */
  arm(key: string, at: number): void {
    const v = ++this.version;
    this.live.set(key, { at, version: v });
    this.push({ at, key, version: v });
    if (this.heap.length > 2 * this.live.size + 1024) this.compact();
  }

  disarm(key: string): void {
    this.live.delete(key);
  }

  /** Due time of `key`, or undefined. */
  dueOf(key: string): number | undefined {
    return this.live.get(key)?.at;
  }

  /** Earliest live due time, or null. */
  peekAt(): number | null {
    this.dropStale();
    return this.heap[0]?.at ?? null;
  }

  /** Removes and returns up to `max` keys due at or before `now`, earliest first. */
  popDue(now: number, max: number): { key: string; at: number }[] {
    const out: { key: string; at: number }[] = [];
    while (out.length < max) {
      this.dropStale();
      const top = this.heap[0];
      if (!top || top.at > now) break;
      this.pop();
      this.live.delete(top.key);
      out.push({ key: top.key, at: top.at });
    }
    return out;
  }

  private dropStale(): void {
    for (;;) {
      const top = this.heap[0];
      if (!top) return;
      const l = this.live.get(top.key);
      if (l && l.version === top.version) return;
      this.pop();
    }
  }

  private compact(): void {
    this.heap = [];
    for (const [key, l] of this.live) this.push({ at: l.at, key, version: l.version });
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.at <= h[i]!.at) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop();
    if (h.length === 0 || !last) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l]!.at < h[m]!.at) m = l;
      if (r < h.length && h[r]!.at < h[m]!.at) m = r;
      if (m === i) return;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  }
}
