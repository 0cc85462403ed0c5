/** The robot list with each robot's live state (from the stream), redrawn at most twice a second. */
import { h, num, replace } from './dom.js';
import { robotState, STATE_LABEL } from './robot-state.js';
import type { RobotView } from './types.js';

export class RobotList {
  readonly el = h('section', { class: 'panel robots', 'aria-label': 'Robots' });
  private dirty = true;

  constructor(
    private readonly robots: Map<string, RobotView>,
    private readonly onSelect: (robotId: string) => void,
    private readonly onCommand: (action: 'stop' | 'start', robotId: string) => void,
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
        h(
          'thead',
          {},
          h('tr', {}, h('th', {}, 'name'), h('th', {}, 'state'), h('th', { class: 'col-speed' }, 'speed'), h('th', {}, 'battery'), h('th', { class: 'col-mission' }, 'mission'), h('th', {}, h('span', { class: 'visually-hidden' }, 'commands'))),
        ),
        h(
          'tbody',
          {},
          ...rows.map((r) => {
            const state = robotState(r);
            return h(
              'tr',
              { class: `robot-row ${r.online ? 'online' : 'offline'}`, 'data-robot-id': r.id, 'data-mode': r.mode ?? '', 'data-speed': r.speedMps ?? '', 'data-state': state },
              h('td', {}, h('button', { class: 'link', type: 'button', onclick: () => this.onSelect(r.id) }, r.name)),
              h('td', { class: state === 'estop' || state === 'faulted' ? 'bad' : '' }, STATE_LABEL[state]),
              h('td', { class: 'num col-speed' }, num(r.speedMps, 1, ' m/s')),
              h('td', { class: 'num' }, num(r.batteryPct, 0, ' %'), r.charging ? ' ⚡' : ''),
              h('td', { class: 'col-mission' }, r.missionState ?? '–', r.missionProgressPct !== null && r.missionState !== null ? ` ${num(r.missionProgressPct, 0, '%')}` : ''),
              h(
                'td',
                { class: 'actions' },
                h('button', { class: 'start', type: 'button', 'data-action': 'start', 'aria-label': `Start ${r.name}`, onclick: () => this.onCommand('start', r.id) }, 'Start'),
                h('button', { class: 'stop', type: 'button', 'data-action': 'stop', 'aria-label': `Stop ${r.name}`, onclick: () => this.onCommand('stop', r.id) }, 'Stop'),
              ),
            );
          }),
        ),
      ),
    );
  }
}
