/**
 * Time travel: a slider over 24 hours (the last 24 h, or a day picked in the date field) that replays
 * every robot's position and state on the map from the history API (`GET /v1/robots/{id}/telemetry`,
 * docs/telemetry-history.md), and the alerts open at the cursor's time (`ReplayAlerts`), playing at
 * 1x to 60x; "Live" returns to the stream. Each robot's
 * samples are read a window at a time around the cursor (a few requests at once), and the map shows,
 * for the cursor's time, each robot's last sample at or before it (none older than
 * {@link STALE_MS}: the robot was not reporting then).
 */
import type { Api } from './api.js';
import { h } from './dom.js';
import { ReplayAlerts } from './replay-alerts.js';
import type { RobotState } from './robot-state.js';
import type { Alert, RobotView } from './types.js';

const DAY_MS = 24 * 3600_000;
/** Samples read per robot and window: a minute and a half around the cursor. */
const BEHIND_MS = 30_000;
const AHEAD_MS = 60_000;
const PAGE_LIMIT = 2000;
/** History reads at once (the rest wait): the gateway's read slots are shared with everyone. */
const PARALLEL_READS = 4;
/** A robot whose last sample is older than this at the cursor is drawn as not reporting. */
const STALE_MS = 10_000;
const TICK_MS = 250;
export const SPEEDS = [1, 5, 10, 30, 60] as const;

/** What the map draws for one robot at the cursor. */
export interface ReplayFrame {
  robotId: string;
  tsMs: number;
  lat: number;
  lon: number;
  headingDeg: number | null;
  state: RobotState;
}

interface Sample {
  tsMs: number;
  latitude: number | null;
  longitude: number | null;
  headingDeg?: number | null;
  speedMps?: number | null;
  mode?: string | null;
  estop?: boolean | null;
  healthLevel?: string | null;
}

interface Window {
  fromMs: number;
  toMs: number;
  samples: Sample[];
}

export interface ReplayHandlers {
  /** The cursor moved (null: back to live). */
  time(ms: number | null): void;
  /** Frames for the cursor's time, one per robot with a recent sample. */
  frames(frames: ReplayFrame[]): void;
  /** The alerts open at the cursor's time (called once their window is read). */
  alerts(open: Alert[]): void;
}

export class ReplayBar {
  readonly el = h('section', { class: 'replay-bar', 'aria-label': 'Time travel' });
  private readonly slider = h('input', { type: 'range', min: 0, max: DAY_MS / 1000, step: 1, value: DAY_MS / 1000, 'aria-label': 'Time', id: 'replay-slider' });
  private readonly date = h('input', { type: 'date', 'aria-label': 'Day to replay', id: 'replay-date' });
  private readonly speed = h('select', { 'aria-label': 'Replay speed', id: 'replay-speed' }, ...SPEEDS.map((s) => h('option', { value: s }, `${s}x`)));
  private readonly play = h('button', { type: 'button', 'data-action': 'replay-play' }, 'Play');
  private readonly live = h('button', { type: 'button', class: 'on', 'data-action': 'replay-live' }, 'Live');
  private readonly label = h('output', { class: 'replay-time', for: 'replay-slider', 'data-mode': 'live' }, 'live');
  private dayStartMs = Date.now() - DAY_MS;
  /** The slider shows the last 24 hours (not a picked day): its end follows the clock. */
  private follow = true;
  private cursorMs: number | null = null;
  private playing = false;
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly windows = new Map<string, Window>();
  private readonly loading = new Set<string>();
  private generation = 0;
  private readonly alerts: ReplayAlerts;

  /** @param base the fleet's REST path (`/v1/orgs/{org}/fleets/{fleet}`), for its alerts */
  constructor(
    private readonly api: Api,
    base: string,
    private readonly robots: Map<string, RobotView>,
    private readonly on: ReplayHandlers,
  ) {
    this.alerts = new ReplayAlerts(api, base);
    this.slider.addEventListener('input', () => this.seek(this.dayStartMs + this.slider.valueAsNumber * 1000));
    this.slider.dataset.dayStart = String(this.dayStartMs);
    this.date.addEventListener('change', () => {
      const d = this.date.valueAsDate;
      if (d === null) return;
      // The date field's value is a UTC midnight; the day shown is the local one of that date.
      this.follow = false;
      this.setDay(new Date(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()).getTime());
      this.seek(this.dayStartMs);
    });
    this.play.addEventListener('click', () => this.toggle());
    this.live.addEventListener('click', () => this.goLive());
    this.el.append(h('div', { class: 'replay-controls' }, this.live, this.play, this.speed, this.date), h('div', { class: 'replay-track' }, this.slider, this.label));
  }

  /** The cursor's time, or null when live. */
  get time(): number | null {
    return this.cursorMs;
  }

  /**
   * Moves the slider's last 24 hours up to now (called twice a second), so every time up to the
   * present can be reached however long the page has been open; a picked day stays.
   */
  followClock(): void {
    if (!this.follow) return;
    const start = Date.now() - DAY_MS;
    if (this.cursorMs !== null && this.cursorMs < start) return;
    this.setDay(start);
    this.slider.value = String(this.cursorMs === null ? DAY_MS / 1000 : Math.round((this.cursorMs - start) / 1000));
  }

  /** The slider's 24 hours start at `ms`. */
  private setDay(ms: number): void {
    this.dayStartMs = ms;
    this.slider.dataset.dayStart = String(ms);
  }

  /** Moves the cursor to `ms` (and leaves the live view); the slider's day moves when `ms` is outside it. */
  seek(ms: number): void {
    const now = Date.now();
    if (ms < this.dayStartMs || ms > this.dayStartMs + DAY_MS) {
      this.follow = ms >= now - DAY_MS;
      this.setDay(this.follow ? now - DAY_MS : ms - DAY_MS / 2);
    }
    this.cursorMs = Math.min(ms, now);
    this.slider.value = String(Math.round((this.cursorMs - this.dayStartMs) / 1000));
    this.live.classList.remove('on');
    this.label.dataset.mode = 'replay';
    this.label.dataset.time = String(this.cursorMs);
    this.label.textContent = new Date(this.cursorMs).toLocaleString();
    this.on.time(this.cursorMs);
    this.render();
  }

  /** Back to the stream. */
  goLive(): void {
    this.stopPlaying();
    this.generation++;
    this.cursorMs = null;
    this.follow = true;
    this.windows.clear();
    this.alerts.clear();
    this.setDay(Date.now() - DAY_MS);
    this.slider.value = String(DAY_MS / 1000);
    this.live.classList.add('on');
    this.label.dataset.mode = 'live';
    delete this.label.dataset.time;
    this.label.textContent = 'live';
    this.on.time(null);
  }

  /** Ends the timer (logout, another fleet). */
  stop(): void {
    this.stopPlaying();
    this.generation++;
    this.alerts.clear();
  }

  private toggle(): void {
    if (this.playing) {
      this.stopPlaying();
      return;
    }
    if (this.cursorMs === null) this.seek(Date.now() - 10 * 60_000);
    this.playing = true;
    this.play.textContent = 'Pause';
    this.timer = setInterval(() => {
      if (this.cursorMs === null) return;
      const next = this.cursorMs + TICK_MS * Number(this.speed.value);
      if (next >= Date.now()) {
        this.goLive();
        return;
      }
      this.seek(next);
    }, TICK_MS);
  }

  private stopPlaying(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.playing = false;
    this.play.textContent = 'Play';
  }

  /** Frames for the cursor from the windows read; reads the windows the cursor left. */
  private render(): void {
    const t = this.cursorMs;
    if (t === null) return;
    const frames: ReplayFrame[] = [];
    const missing: string[] = [];
    for (const id of this.robots.keys()) {
      const w = this.windows.get(id);
      if (w === undefined || t < w.fromMs || t > w.toMs) {
        missing.push(id);
        continue;
      }
      const s = lastAtOrBefore(w.samples, t);
      if (s === undefined || t - s.tsMs > STALE_MS || s.latitude === null || s.longitude === null) continue;
      frames.push({ robotId: id, tsMs: s.tsMs, lat: s.latitude, lon: s.longitude, headingDeg: s.headingDeg ?? null, state: stateOf(s) });
    }
    this.on.frames(frames);
    const open = this.alerts.at(t, () => this.render());
    if (open !== null) this.on.alerts(open);
    if (missing.length > 0) void this.read(missing, t);
  }

  private async read(ids: string[], t: number): Promise<void> {
    const generation = this.generation;
    const queue = ids.filter((id) => !this.loading.has(id));
    // Every one already being read: the read under way renders when done (rendering here would
    // start this again at once, a loop that never yields).
    if (queue.length === 0) return;
    for (const id of queue) this.loading.add(id);
    const worker = async (): Promise<void> => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        const fromMs = t - BEHIND_MS;
        const toMs = Math.min(t + AHEAD_MS, Date.now());
        try {
          const page = await this.api.get<{ items: Sample[] }>(`/v1/robots/${encodeURIComponent(id)}/telemetry`, { from_ms: fromMs, to_ms: toMs, limit: PAGE_LIMIT });
          if (generation === this.generation) this.windows.set(id, { fromMs, toMs, samples: page.items });
        } catch {
          // Not read (no history API, store busy): this robot is left out until the cursor moves.
          if (generation === this.generation) this.windows.set(id, { fromMs, toMs, samples: [] });
        } finally {
          this.loading.delete(id);
        }
      }
    };
    await Promise.all(Array.from({ length: PARALLEL_READS }, worker));
    if (generation === this.generation) this.render();
  }
}

/** The last sample at or before `t` (samples oldest first), by binary search. */
function lastAtOrBefore(samples: Sample[], t: number): Sample | undefined {
  let lo = 0;
  let hi = samples.length - 1;
  let found: Sample | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = samples[mid]!;
    if (s.tsMs <= t) {
      found = s;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

function stateOf(s: Sample): RobotState {
  if (s.estop === true) return 'estop';
  if (s.healthLevel === 'error') return 'faulted';
  if (s.mode === 'paused') return 'paused';
  return (s.speedMps ?? 0) > 0.05 ? 'moving' : 'idle';
}
