/**
 * The fleet's unresolved alerts, read over REST once and then kept current by the stream's alert
 * messages (docs/alerts.md); acknowledge records who has seen one. During time travel the panel
 * lists the alerts open at the replay cursor instead (the live ones are kept, shown again on Live).
 */
import type { Api } from './api.js';
import { clock, h, replace } from './dom.js';
import type { Alert, Page } from './types.js';

const MAX_ALERTS = 200;

export class AlertsPanel {
  readonly el = h('section', { class: 'panel alerts', 'aria-label': 'Alerts' });
  private readonly alerts = new Map<string, Alert>();
  private error = '';
  /** Time travel: the cursor's time and the alerts open then (null: live). */
  private replay: { atMs: number; open: Alert[] } | null = null;
  /** Told the number of open alerts at every redraw (the fleet bar shows it). */
  onCount: ((open: number) => void) | null = null;

  constructor(
    private readonly api: Api,
    private readonly base: string,
    private readonly robotName: (id: string) => string,
  ) {}

  /** Reads the open and acknowledged alerts (also after the stream dropped messages). */
  async load(): Promise<void> {
    try {
      const [open, acked] = await Promise.all([
        this.api.get<Page<Alert>>(`${this.base}/alerts`, { state: 'open', limit: 100 }),
        this.api.get<Page<Alert>>(`${this.base}/alerts`, { state: 'acknowledged', limit: 100 }),
      ]);
      this.alerts.clear();
      for (const a of [...open.items, ...acked.items]) this.alerts.set(a.alertId, a);
      this.error = '';
    } catch (err) {
      this.error = (err as Error).message;
    }
    this.render();
  }

  /** An alert message from the stream. */
  update(a: Alert): void {
    if (a.state === 'resolved') this.alerts.delete(a.alertId);
    else this.alerts.set(a.alertId, a);
    if (this.alerts.size > MAX_ALERTS) {
      const oldest = [...this.alerts.values()].sort((x, y) => x.updatedAtMs - y.updatedAtMs)[0];
      if (oldest !== undefined) this.alerts.delete(oldest.alertId);
    }
    this.render();
  }

  /** Shows the alerts open at the replay cursor `atMs`, or the live ones again (null). */
  setReplay(atMs: number | null, open: Alert[] = []): void {
    this.replay = atMs === null ? null : { atMs, open };
    // The time shown, for people inspecting the page and for the browser test.
    if (atMs === null) delete this.el.dataset.replayAt;
    else this.el.dataset.replayAt = String(atMs);
    this.render();
  }

  private async acknowledge(a: Alert, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      this.update(await this.api.post<Alert>(`${this.base}/alerts/${a.alertId}/acknowledge`, {}));
    } catch (err) {
      this.error = `acknowledge failed: ${(err as Error).message}`;
      button.disabled = false;
      this.render();
    }
  }

  private render(): void {
    const list = [...this.alerts.values()].sort((a, b) => b.openedAtMs - a.openedAtMs);
    this.onCount?.(list.filter((a) => a.state === 'open').length);
    if (this.replay !== null) {
      this.renderReplay(this.replay.atMs, this.replay.open);
      return;
    }
    replace(
      this.el,
      h('h2', {}, `Alerts (${list.filter((a) => a.state === 'open').length} open)`),
      this.error ? h('p', { class: 'bad' }, this.error) : null,
      list.length === 0
        ? h('p', { class: 'muted' }, 'No unresolved alert.')
        : h(
            'ul',
            { class: 'alert-list' },
            ...list.map((a) => {
              const ack = h('button', { type: 'button', 'data-action': 'acknowledge' }, 'Acknowledge');
              ack.addEventListener('click', () => void this.acknowledge(a, ack));
              return h(
                'li',
                { class: `alert-item severity-${a.severity} state-${a.state}`, 'data-alert-id': a.alertId, 'data-state': a.state, 'data-kind': a.kind },
                h('strong', {}, a.kind.replaceAll('_', ' ')),
                a.robotId !== null ? ` · ${this.robotName(a.robotId)}` : '',
                h('div', {}, a.message),
                h('div', { class: 'muted' }, `opened ${clock(a.openedAtMs)}`, a.acknowledgedAtMs !== null ? `, acknowledged ${clock(a.acknowledgedAtMs)}` : ''),
                a.state === 'open' ? ack : h('span', { class: 'muted' }, 'acknowledged'),
              );
            }),
          ),
    );
  }

  private renderReplay(atMs: number, open: Alert[]): void {
    const list = [...open].sort((a, b) => b.openedAtMs - a.openedAtMs);
    replace(
      this.el,
      h('h2', {}, `Alerts open at ${clock(atMs)} (${list.length})`),
      list.length === 0
        ? h('p', { class: 'muted' }, 'No alert was open at this time.')
        : h(
            'ul',
            { class: 'alert-list replay', 'data-at': atMs },
            ...list.map((a) => h(
              'li',
              { class: `alert-item severity-${a.severity}`, 'data-alert-id': a.alertId, 'data-kind': a.kind, 'data-robot-id': a.robotId ?? '' },
              h('strong', {}, a.kind.replaceAll('_', ' ')),
              a.robotId !== null ? ` · ${this.robotName(a.robotId)}` : '',
              h('div', {}, a.message),
              h('div', { class: 'muted' }, `opened ${clock(a.openedAtMs)}`, a.resolvedAtMs !== null ? `, resolved ${clock(a.resolvedAtMs)}` : ''),
            )),
          ),
    );
  }
}
