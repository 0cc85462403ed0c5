/**
 * Schedules and mission runs of the fleet, each with its event timeline (GET /v1/events by
 * correlation id), and pause / resume of a running mission with the command's delivery state.
 */
import type { Api } from './api.js';
import { clock, h, num, replace, shortId } from './dom.js';
import type { MissionRun, Page, ScheduleRow, TimelineEvent } from './types.js';
import type { CommandLog } from './commands.js';
import type { Delivery } from './types.js';

const REFRESH_MS = 5_000;

export class MissionsPanel {
  readonly el = h('section', { class: 'panel missions', 'aria-label': 'Schedules and runs' });
  private readonly timeline = h('div', { class: 'timeline' });
  private runs: MissionRun[] = [];
  private schedules: ScheduleRow[] = [];
  private error = '';
  private timer: ReturnType<typeof setInterval> | null = null;
  private selected: string | null = null;

  constructor(
    private readonly api: Api,
    private readonly ids: { orgId: string; fleetId: string },
    private readonly robotName: (id: string) => string,
    private readonly commands: CommandLog,
  ) {}

  /** Starts reading (every few seconds while shown). */
  start(): void {
    void this.load();
    this.timer = setInterval(() => void this.load(), REFRESH_MS);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  private async load(): Promise<void> {
    try {
      const [runs, schedules] = await Promise.all([
        this.api.get<Page<MissionRun>>('/v1/mission-runs', { fleet_id: this.ids.fleetId, days: 1, limit: 50 }),
        this.api.get<Page<ScheduleRow>>('/v1/mission-schedule', { fleet_id: this.ids.fleetId, limit: 50 }),
      ]);
      this.runs = runs.items;
      this.schedules = schedules.items;
      this.error = '';
    } catch (err) {
      this.error = (err as Error).message;
    }
    this.render();
    if (this.selected !== null) void this.showTimeline(this.selected);
  }

  private async control(run: MissionRun, action: 'pause' | 'resume'): Promise<void> {
    try {
      const r = await this.api.post<{ success: boolean; robotId: string; delivery: Delivery }>('/v1/agent/control-mission', {
        org_id: this.ids.orgId,
        fleet_id: this.ids.fleetId,
        robot_id: run.robotId,
        mission_id: run.missionId,
        run_id: run.runId,
        action,
      });
      this.commands.track(`mission ${action}`, [{ robotId: r.robotId, success: r.success, delivery: r.delivery }]);
    } catch (err) {
      this.commands.failed(`mission ${action}`, run.robotId, (err as Error).message);
    }
  }

  private async showTimeline(correlationId: string): Promise<void> {
    this.selected = correlationId;
    try {
      const page = await this.api.get<Page<TimelineEvent>>('/v1/events', { fleet_id: this.ids.fleetId, correlation_id: correlationId, limit: 100 });
      if (this.selected !== correlationId) return;
      replace(
        this.timeline,
        h('h3', {}, `Timeline ${shortId(correlationId)}`),
        page.items.length === 0
          ? h('p', { class: 'muted' }, 'No event yet.')
          : h('ol', {}, ...page.items.map((e) => h('li', { class: 'event' }, h('span', { class: 'muted' }, clock(e.atMs)), ` ${e.kind} `, h('span', { class: 'muted' }, `${e.subject.type} ${shortId(e.subject.id)}`)))),
      );
    } catch (err) {
      replace(this.timeline, h('p', { class: 'bad' }, `Timeline: ${(err as Error).message}`));
    }
  }

  private render(): void {
    replace(
      this.el,
      h('h2', {}, 'Schedules and runs'),
      this.error ? h('p', { class: 'bad' }, this.error) : null,
      h('h3', {}, 'Runs (last 24 h)'),
      this.runs.length === 0
        ? h('p', { class: 'muted' }, 'No mission run.')
        : h(
            'table',
            {},
            h('tbody', {}, ...this.runs.map((r) => {
              const live = r.state === 'running' || r.state === 'starting';
              return h(
                'tr',
                { class: 'run-row', 'data-run-id': r.runId, 'data-state': r.state },
                h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => void this.showTimeline(r.correlationId) }, r.name)),
                h('td', {}, this.robotName(r.robotId)),
                h('td', {}, r.state, ` ${num(r.missionProgressPct, 0, '%')}`),
                h('td', {}, clock(r.startedAtMs)),
                h('td', {},
                  live ? h('button', { type: 'button', 'data-action': 'pause', onclick: () => void this.control(r, 'pause') }, 'Pause') : null,
                  r.state === 'paused' ? h('button', { type: 'button', 'data-action': 'resume', onclick: () => void this.control(r, 'resume') }, 'Resume') : null),
              );
            })),
          ),
      h('h3', {}, 'Schedules'),
      this.schedules.length === 0
        ? h('p', { class: 'muted' }, 'No schedule.')
        : h(
            'table',
            {},
            h('tbody', {}, ...this.schedules.map((s) =>
              h(
                'tr',
                { class: 'schedule-row', 'data-schedule-id': s.scheduleId },
                h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => void this.showTimeline(s.correlation_id) }, `${s.kind} ${shortId(s.scheduleId)}`)),
                h('td', {}, s.status),
                h('td', {}, s.next_fire_at_ms !== null ? `next ${clock(s.next_fire_at_ms)}` : ''),
              ),
            )),
          ),
      this.timeline,
    );
  }
}
