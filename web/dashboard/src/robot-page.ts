/**
 * One robot: its live state, commands (stop, start), and charts of its history (battery, speed) from
 * GET /v1/robots/{id}/telemetry/series, plus its position trail on the map from .../telemetry/path and
 * a link to the window's MCAP export.
 * When the gateway has no history API (404) or the read fails, the charts say so: nothing is drawn
 * that the gateway did not answer.
 */
import uPlot from 'uplot';
import { ApiError, type Api } from './api.js';
import { h, num, replace } from './dom.js';
import type { PathFeature, RobotView, Series } from './types.js';

const WINDOWS = [
  { label: '5 min', ms: 5 * 60_000 },
  { label: '15 min', ms: 15 * 60_000 },
  { label: '1 h', ms: 60 * 60_000 },
];
const MAX_POINTS = 300;
const REFRESH_MS = 10_000;

export class RobotPage {
  readonly el = h('section', { class: 'panel robot-page', 'aria-label': 'Robot' });
  private readonly state = h('div', { class: 'robot-state' });
  private readonly charts = h('div', { class: 'charts' });
  private readonly status = h('p', { class: 'history-status muted' });
  private plots: uPlot[] = [];
  private windowMs = WINDOWS[1]!.ms;
  private timer: ReturnType<typeof setInterval> | null = null;
  private robotId: string | null = null;
  private cursorMs: number | null = null;

  constructor(
    private readonly api: Api,
    private readonly robots: Map<string, RobotView>,
    private readonly actions: { stop(id: string): void; start(id: string): void; close(): void; trail(coords: number[][] | null): void },
  ) {}

  /** The replay cursor: shown on the charts at `ms` (null: live, no cursor). */
  setTime(ms: number | null): void {
    this.cursorMs = ms;
    this.showCursor();
  }

  private showCursor(): void {
    for (const u of this.plots) {
      if (this.cursorMs === null) {
        u.setCursor({ left: -10, top: -10 });
        continue;
      }
      const left = u.valToPos(this.cursorMs / 1000, 'x');
      if (Number.isFinite(left)) u.setCursor({ left, top: 10 });
      u.root.dataset.cursor = String(this.cursorMs);
    }
  }

  /** Moves the keyboard focus to the robot's name (after it opened). */
  focus(): void {
    this.el.querySelector<HTMLElement>('h2')?.focus({ preventScroll: true });
  }

  /** Shows a robot (or nothing with null). */
  show(robotId: string | null): void {
    this.robotId = robotId;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.destroyPlots();
    this.actions.trail(null);
    if (robotId === null) {
      this.el.hidden = true;
      return;
    }
    this.el.hidden = false;
    const r = this.robots.get(robotId);
    replace(
      this.el,
      h('header', {}, h('h2', { tabindex: -1 }, r?.name ?? robotId), h('button', { type: 'button', class: 'close', onclick: () => this.actions.close() }, 'Close')),
      this.state,
      h(
        'div',
        { class: 'actions' },
        h('button', { type: 'button', class: 'stop', 'data-action': 'stop-robot', onclick: () => this.actions.stop(robotId) }, 'Stop robot'),
        h('button', { type: 'button', class: 'start', 'data-action': 'start-robot', onclick: () => this.actions.start(robotId) }, 'Start (resume)'),
      ),
      h(
        'div',
        { class: 'windows' },
        'History: ',
        ...WINDOWS.map((w) =>
          h('button', { type: 'button', class: w.ms === this.windowMs ? 'on' : '', onclick: () => { this.windowMs = w.ms; this.show(robotId); } }, w.label),
        ),
      ),
      this.status,
      this.charts,
      // The same window as an MCAP file for Foxglove (docs/telemetry-history.md); the session cookie
      // authenticates the download, so the link holds no secret.
      h('p', {}, h('a', { class: 'export', href: this.exportUrl(robotId), download: '' }, 'Download this window as MCAP (Foxglove)')),
    );
    this.live();
    void this.loadHistory(robotId);
    this.timer = setInterval(() => void this.loadHistory(robotId), REFRESH_MS);
  }

  /** Redraws the live state of the robot shown. */
  live(): void {
    if (this.robotId === null) return;
    const r = this.robots.get(this.robotId);
    if (r === undefined) return;
    replace(
      this.state,
      h(
        'dl',
        {},
        h('dt', {}, 'link'), h('dd', {}, r.online ? 'online' : 'offline'),
        h('dt', {}, 'mode'), h('dd', {}, r.estop ? 'E-STOP pressed' : r.mode ?? '–'),
        h('dt', {}, 'speed'), h('dd', {}, num(r.speedMps, 2, ' m/s')),
        h('dt', {}, 'heading'), h('dd', {}, num(r.headingDeg, 0, '°')),
        h('dt', {}, 'battery'), h('dd', {}, num(r.batteryPct, 1, ' %'), r.charging ? ' (charging)' : ''),
        h('dt', {}, 'mission'), h('dd', {}, r.missionState ?? 'none'),
        h('dt', {}, 'health'), h('dd', {}, r.healthLevel ?? '–'),
      ),
    );
  }

  private exportUrl(robotId: string): string {
    const toMs = Date.now();
    const q = new URLSearchParams({ from_ms: String(toMs - this.windowMs), to_ms: String(toMs) });
    return `/v1/robots/${encodeURIComponent(robotId)}/telemetry/export.mcap?${q.toString()}`;
  }

  private async loadHistory(robotId: string): Promise<void> {
    const toMs = Date.now();
    const q = { from_ms: toMs - this.windowMs, to_ms: toMs, max_points: MAX_POINTS };
    const base = `/v1/robots/${encodeURIComponent(robotId)}/telemetry`;
    try {
      const [series, path] = await Promise.all([
        this.api.get<Series>(`${base}/series`, { ...q, fields: 'batteryPct,speedMps' }),
        this.api.get<PathFeature>(`${base}/path`, q),
      ]);
      if (this.robotId !== robotId) return;
      this.actions.trail(path.geometry.coordinates);
      this.draw(series);
      this.status.textContent = `${series.points.length} points, ${Math.round(series.bucketMs / 1000)} s each`;
      this.status.dataset.points = String(series.points.length);
      this.status.dataset.state = 'ok';
    } catch (err) {
      if (this.robotId !== robotId) return;
      this.destroyPlots();
      // The gateway's answer for a path it does not serve (catalog `route_not_found`): no history API.
      const unavailable = err instanceof ApiError && err.status === 404 && err.message.startsWith('No route for');
      this.status.textContent = unavailable ? 'History unavailable: this gateway has no telemetry history API.' : `History could not be read: ${(err as Error).message}`;
      this.status.dataset.state = unavailable ? 'unavailable' : 'error';
    }
  }

  private draw(s: Series): void {
    this.destroyPlots();
    replace(this.charts);
    const ts = s.points.map((p) => p.tsMs / 1000);
    const col = (field: string, k: 'avg' | 'min' | 'max'): (number | null)[] => s.points.map((p) => p.values[field]?.[k] ?? null);
    const width = Math.max(240, this.charts.clientWidth || 320);
    const chart = (title: string, field: string, what: string, unit: string, colour: string): void => {
      const box = h('div', { class: 'chart', 'data-field': field });
      this.charts.append(box);
      const opts: uPlot.Options = {
        title,
        width,
        height: 160,
        series: [
          { label: 'time' },
          { label: `${what} (average)`, stroke: colour, width: 2, value: (_u, v) => num(v, 1, unit) },
          { label: 'lowest', stroke: colour, dash: [4, 4], width: 1, value: (_u, v) => num(v, 1, unit) },
          { label: 'highest', stroke: colour, dash: [4, 4], width: 1, value: (_u, v) => num(v, 1, unit) },
        ],
        axes: [{}, { label: `${what} (${unit.trim()})` }],
      };
      this.plots.push(new uPlot(opts, [ts, col(field, 'avg'), col(field, 'min'), col(field, 'max')], box));
    };
    chart('Battery', 'batteryPct', 'battery', ' %', '#1a8f5a');
    chart('Speed', 'speedMps', 'speed', ' m/s', '#1d5fc4');
    this.showCursor();
  }

  private destroyPlots(): void {
    for (const p of this.plots) p.destroy();
    this.plots = [];
  }
}
