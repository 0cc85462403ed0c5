/** The robot list with each robot's live state (from the stream), redrawn at most twice a second. */
import { h, num, replace } from './dom.js';
import type { RobotView } from './types.js';

export class RobotList {
  readonly el = h('section', { class: 'panel robots', 'aria-label': 'Robots' });
  private dirty = true;

  constructor(
    private readonly robots: Map<string, RobotView>,
    private readonly onSelect: (robotId: string) => void,
    private readonly onStop: (robotId: string) => void,
  ) {}

  /** Marks the list for the next redraw. */
  changed(): void {
    this.dirty = true;
  }

  /** Redraws when something changed since the last call. */
  flush(): void {
    if (!this.dirty) return;
    this.dirty = false;
    const rows = [...this.robots.values()].sort((a, b) => a.name.localeCompare(b.name));
    replace(
      this.el,
      h('h2', {}, `Robots (${rows.length})`),
      h(
        'table',
        {},
        h('thead', {}, h('tr', {}, h('th', {}, 'name'), h('th', {}, 'mode'), h('th', {}, 'speed'), h('th', {}, 'battery'), h('th', {}, 'mission'), h('th', {}, ''))),
        h(
          'tbody',
          {},
          ...rows.map((r) =>
            h(
              'tr',
              { class: `robot-row ${r.online ? 'online' : 'offline'}`, 'data-robot-id': r.id, 'data-mode': r.mode ?? '', 'data-speed': r.speedMps ?? '' },
              h('td', { title: r.online ? 'online' : 'offline' }, h('button', { class: 'link', type: 'button', onclick: () => this.onSelect(r.id) }, r.name), r.online ? '' : ' (offline)'),
              h('td', { class: r.estop ? 'bad' : '' }, r.estop ? 'E-STOP' : r.mode ?? '–'),
              h('td', {}, num(r.speedMps, 2, ' m/s')),
              h('td', {}, num(r.batteryPct, 0, ' %'), r.charging ? ' ⚡' : ''),
              h('td', {}, r.missionState ?? '–', r.missionProgressPct !== null && r.missionState !== null ? ` ${num(r.missionProgressPct, 0, '%')}` : ''),
              h('td', {}, h('button', { class: 'stop', type: 'button', 'data-action': 'stop', onclick: () => this.onStop(r.id) }, 'Stop')),
            ),
          ),
        ),
      ),
    );
  }
}
