/**
 * The robot list with each robot's live state (from the stream), redrawn at most twice a second.
 * Rows are built once per robot and updated in place: a button is never replaced under a finger or
 * pointer between press and release, and a redraw costs text updates only.
 */
import { h, num, replace } from './dom.js';
import { robotState, STATE_LABEL } from './robot-state.js';
import type { RobotView } from './types.js';

interface Row {
  tr: HTMLTableRowElement;
  name: HTMLButtonElement;
  state: HTMLTableCellElement;
  speed: HTMLTableCellElement;
  battery: HTMLTableCellElement;
  mission: HTMLTableCellElement;
}

export class RobotList {
  readonly el = h('section', { class: 'panel robots', 'aria-label': 'Robots' });
  private readonly title = h('h2', {}, 'Robots');
  private readonly body = h('tbody', {});
  private readonly rows = new Map<string, Row>();
  private order = '';
  private dirty = true;

  constructor(
    private readonly robots: Map<string, RobotView>,
    private readonly onSelect: (robotId: string) => void,
    private readonly onCommand: (action: 'stop' | 'start', robotId: string) => void,
  ) {
    replace(
      this.el,
      this.title,
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h('tr', {}, h('th', {}, 'name'), h('th', {}, 'state'), h('th', { class: 'col-speed' }, 'speed'), h('th', {}, 'battery'), h('th', { class: 'col-mission' }, 'mission'), h('th', {}, h('span', { class: 'visually-hidden' }, 'commands'))),
        ),
        this.body,
      ),
    );
  }

  /** Marks the list for the next redraw. */
  changed(): void {
    this.dirty = true;
  }

  /** Redraws when something changed since the last call. */
  flush(): void {
    if (!this.dirty) return;
    this.dirty = false;
    const list = [...this.robots.values()].sort((a, b) => a.name.localeCompare(b.name));
    const order = list.map((r) => r.id).join(',');
    if (order !== this.order) {
      this.order = order;
      for (const id of this.rows.keys()) if (!this.robots.has(id)) this.rows.delete(id);
      this.body.replaceChildren(...list.map((r) => this.rowOf(r).tr));
      this.title.textContent = `Robots (${list.length})`;
    }
    for (const r of list) this.update(this.rowOf(r), r);
  }

  private rowOf(r: RobotView): Row {
    let row = this.rows.get(r.id);
    if (row !== undefined) return row;
    const name = h('button', { class: 'link', type: 'button', onclick: () => this.onSelect(r.id) }, r.name);
    const state = h('td', {});
    const speed = h('td', { class: 'num col-speed' });
    const battery = h('td', { class: 'num' });
    const mission = h('td', { class: 'col-mission' });
    const tr = h(
      'tr',
      { class: 'robot-row', 'data-robot-id': r.id },
      h('td', {}, name),
      state,
      speed,
      battery,
      mission,
      h(
        'td',
        { class: 'actions' },
        h('button', { class: 'start', type: 'button', 'data-action': 'start', 'aria-label': `Start ${r.name}`, onclick: () => this.onCommand('start', r.id) }, 'Start'),
        h('button', { class: 'stop', type: 'button', 'data-action': 'stop', 'aria-label': `Stop ${r.name}`, onclick: () => this.onCommand('stop', r.id) }, 'Stop'),
      ),
    );
    row = { tr, name, state, speed, battery, mission };
    this.rows.set(r.id, row);
    return row;
  }

  private update(row: Row, r: RobotView): void {
    const state = robotState(r);
    set(row.tr, 'class', `robot-row ${r.online ? 'online' : 'offline'}`);
    row.tr.dataset.mode = r.mode ?? '';
    row.tr.dataset.speed = String(r.speedMps ?? '');
    row.tr.dataset.state = state;
    text(row.name, r.name);
    text(row.state, STATE_LABEL[state]);
    set(row.state, 'class', state === 'estop' || state === 'faulted' ? 'bad' : '');
    text(row.speed, num(r.speedMps, 1, ' m/s'));
    text(row.battery, `${num(r.batteryPct, 0, ' %')}${r.charging ? ' ⚡' : ''}`);
    text(row.mission, `${r.missionState ?? '–'}${r.missionProgressPct !== null && r.missionState !== null ? ` ${num(r.missionProgressPct, 0, '%')}` : ''}`);
  }
}

/** Sets text only when it changed (no layout work for an unchanged cell). */
function text(el: HTMLElement, value: string): void {
  if (el.textContent !== value) el.textContent = value;
}

function set(el: HTMLElement, attr: string, value: string): void {
  if (el.getAttribute(attr) !== value) el.setAttribute(attr, value);
}
