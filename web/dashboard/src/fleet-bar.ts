/**
 * The fleet bar: robots by state (online, offline, paused, e-stopped, faulted) and open alerts, with
 * the fleet-wide commands. Stop all is the gateway's `…/stop-all` (every active robot, offline ones
 * deferred); Start all sends `start` through `POST /v1/agent/control-robot` to every online robot that
 * is paused (the state a robot puts itself in when it loses its link), at most 100 per request (the
 * route's bound). Each asks for a confirmation naming how many robots, then shows its commands'
 * delivery states live.
 */
import type { Api } from './api.js';
import type { CommandLog, Row } from './commands.js';
import { h, replace } from './dom.js';
import { robotState, type RobotState } from './robot-state.js';
import type { RobotCommandOutcome, RobotView } from './types.js';

/** Targets per control-robot request (the route's `robot_ids` bound). */
const MAX_TARGETS = 100;

interface Bulk {
  label: string;
  rows: readonly Row[];
  error: string;
}

export class FleetBar {
  readonly el = h('section', { class: 'fleet-bar', 'aria-label': 'Fleet' });
  private readonly counts = h('ul', { class: 'counts' });
  private readonly status = h('span', { class: 'bulk-status', role: 'status', 'aria-live': 'polite' });
  private openAlerts = 0;
  private bulk: Bulk | null = null;

  constructor(
    private readonly api: Api,
    private readonly ids: { orgId: string; fleetId: string },
    private readonly robots: Map<string, RobotView>,
    private readonly log: CommandLog,
  ) {
    log.onChange = () => this.renderStatus();
    const start = h('button', { type: 'button', class: 'start', 'data-action': 'start-all' }, 'Start all');
    const stop = h('button', { type: 'button', class: 'stop', 'data-action': 'stop-all' }, 'Stop all');
    start.addEventListener('click', () => this.confirmStartAll());
    stop.addEventListener('click', () => this.confirmStopAll());
    replace(this.el, this.counts, h('span', { class: 'spacer' }), h('div', { class: 'bulk' }, this.status, start, stop));
    this.render();
  }

  /** The number of open alerts (from the alerts panel). */
  setOpenAlerts(n: number): void {
    this.openAlerts = n;
  }

  /** Recounts the robots (called with the list's redraw, at most twice a second). */
  render(): void {
    const by: Record<RobotState, number> = { offline: 0, estop: 0, faulted: 0, paused: 0, moving: 0, idle: 0 };
    for (const r of this.robots.values()) by[robotState(r)]++;
    const online = this.robots.size - by.offline;
    const item = (cls: string, label: string, n: number) => h('li', { class: `count ${cls}`, 'data-count': cls, 'data-value': n }, h('strong', {}, n), ` ${label}`);
    replace(
      this.counts,
      item('online', 'online', online),
      item('offline', 'offline', by.offline),
      item('paused', 'paused', by.paused),
      item('estop', 'e-stopped', by.estop),
      item('faulted', 'faulted', by.faulted),
      item('alerts', 'open alerts', this.openAlerts),
    );
  }

  /** Robots Start all would resume: online, paused, not held by an e-stop. */
  private paused(): RobotView[] {
    return [...this.robots.values()].filter((r) => robotState(r) === 'paused');
  }

  private confirmStartAll(): void {
    const targets = this.paused();
    if (targets.length === 0) {
      this.bulk = { label: 'start all', rows: [], error: 'no paused robot to start' };
      this.renderStatus();
      return;
    }
    confirmDialog('start-all', `Start ${plural(targets.length)} that ${targets.length === 1 ? 'is' : 'are'} paused? Each one resumes what it was doing.`, `Start ${plural(targets.length)}`, () => void this.startAll(targets.map((r) => r.id)));
  }

  private confirmStopAll(): void {
    const n = [...this.robots.values()].filter((r) => r.active !== false).length;
    confirmDialog('stop-all', `Stop all ${plural(n)} of this fleet? Each one decelerates and holds until started again.`, `Stop ${plural(n)}`, () => void this.stopAll());
  }

  private async startAll(ids: string[]): Promise<void> {
    const outcomes: RobotCommandOutcome[] = [];
    let error = '';
    for (let i = 0; i < ids.length; i += MAX_TARGETS) {
      try {
        const r = await this.api.post<{ outcomes: RobotCommandOutcome[] }>('/v1/agent/control-robot', { org_id: this.ids.orgId, fleet_id: this.ids.fleetId, action: 'start', robot_ids: ids.slice(i, i + MAX_TARGETS) });
        outcomes.push(...r.outcomes);
      } catch (err) {
        error = (err as Error).message;
      }
    }
    this.bulk = { label: 'start all', rows: this.log.track('start all', outcomes), error };
    if (error !== '') this.log.failed('start all', '', error);
    this.renderStatus();
  }

  private async stopAll(): Promise<void> {
    try {
      const r = await this.api.post<{ outcomes: RobotCommandOutcome[] }>(`/v1/orgs/${this.ids.orgId}/fleets/${this.ids.fleetId}/stop-all`, { reason: 'stop all from the dashboard' });
      this.bulk = { label: 'stop all', rows: this.log.track('stop all', r.outcomes), error: '' };
    } catch (err) {
      this.bulk = { label: 'stop all', rows: [], error: (err as Error).message };
      this.log.failed('stop all', '', (err as Error).message);
    }
    this.renderStatus();
  }

  private renderStatus(): void {
    const b = this.bulk;
    if (b === null) return;
    const states = new Map<string, number>();
    for (const r of b.rows) states.set(r.state, (states.get(r.state) ?? 0) + 1);
    const parts = [...states].map(([s, n]) => `${n} ${s.replaceAll('_', ' ')}`);
    this.status.dataset.action = b.label;
    this.status.dataset.total = String(b.rows.length);
    this.status.dataset.received = String(states.get('agent_received') ?? 0);
    this.status.textContent = `${b.label}: ${parts.length > 0 ? parts.join(', ') : 'no command sent'}${b.error ? ` (${b.error})` : ''}`;
  }
}

function plural(n: number): string {
  return `${n} robot${n === 1 ? '' : 's'}`;
}

/** A modal confirmation; `onYes` runs after it closes with the confirming button. */
function confirmDialog(kind: 'start-all' | 'stop-all', text: string, yesLabel: string, onYes: () => void): void {
  const yes = h('button', { type: 'button', class: kind === 'stop-all' ? 'stop' : 'start', 'data-action': `confirm-${kind}` }, yesLabel);
  const no = h('button', { type: 'button', 'data-action': 'cancel' }, 'Cancel');
  const dialog = h('dialog', { class: `confirm ${kind}`, 'aria-label': kind === 'stop-all' ? 'Confirm stop all' : 'Confirm start all' }, h('p', {}, text), h('div', { class: 'buttons' }, yes, no));
  no.addEventListener('click', () => dialog.close());
  yes.addEventListener('click', () => {
    dialog.close();
    onYes();
  });
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
