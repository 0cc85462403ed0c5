/**
 * The robot list with each robot's live state (from the stream), redrawn at most twice a second.
 * Virtualized: only the rows in the scrolled view (plus {@link OVERSCAN} on each side) are in the
 * document, between two spacer rows that keep the scroll height; a thousand robots cost a few dozen
 * rows, not a row of ten elements each (bench/notes/dashboard.md). Rows are fixed height (CSS), built
 * when they come into view and updated in place while they stay: a button is never replaced under a
 * finger or pointer between press and release, and a redraw costs text updates only. Screen readers
 * get the whole list's size and each row's place (`aria-rowcount`, `aria-rowindex`); Tab and
 * Shift+Tab walk on past the rendered rows.
 */
import { h, num, replace } from './dom.js';
import { robotState, STATE_LABEL } from './robot-state.js';
import type { RobotView } from './types.js';

/** Rows rendered above and below the visible ones. */
const OVERSCAN = 8;
/** Row height until one is measured (matches `.robot-row` in styles.css). */
const DEFAULT_ROW_PX = 40;

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
  private readonly scroller = h('div', { class: 'robot-scroll' });
  private readonly table = h('table', { 'aria-rowcount': 1 });
  private readonly body = h('tbody', {});
  private readonly above = spacer();
  private readonly below = spacer();
  /** Rows in the document, by robot id. */
  private readonly rows = new Map<string, Row>();
  /** Every robot, sorted by name: the list the window is cut from. */
  private sorted: RobotView[] = [];
  private order = '';
  private first = 0;
  private last = -1;
  private rowPx = DEFAULT_ROW_PX;
  private dirty = true;
  private frame = 0;

  constructor(
    private readonly robots: Map<string, RobotView>,
    private readonly onSelect: (robotId: string) => void,
    private readonly onCommand: (action: 'stop' | 'start', robotId: string) => void,
  ) {
    replace(
      this.table,
      h(
        'thead',
        {},
        h('tr', { 'aria-rowindex': 1 }, h('th', {}, 'name'), h('th', {}, 'state'), h('th', { class: 'col-speed' }, 'speed'), h('th', {}, 'battery'), h('th', { class: 'col-mission' }, 'mission'), h('th', {}, h('span', { class: 'visually-hidden' }, 'commands'))),
      ),
      this.body,
    );
    this.scroller.append(this.table);
    replace(this.el, this.title, this.scroller);
    this.scroller.addEventListener('scroll', () => {
      if (this.frame !== 0) return;
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.renderWindow();
      });
    }, { passive: true });
    this.body.addEventListener('keydown', (e) => this.tab(e));
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
    this.sorted = list;
    if (order !== this.order) {
      this.order = order;
      this.title.textContent = `Robots (${list.length})`;
      this.table.setAttribute('aria-rowcount', String(list.length + 1));
      this.first = 0;
      this.last = -1;
    }
    this.renderWindow();
  }

  /** Puts the rows of the scrolled view (and the overscan) in the document and updates them. */
  private renderWindow(): void {
    const n = this.sorted.length;
    const top = Math.max(0, this.scroller.scrollTop - this.headerPx());
    const visible = Math.ceil((this.scroller.clientHeight || 600) / this.rowPx) + 1;
    const first = Math.max(0, Math.min(n - 1, Math.floor(top / this.rowPx)) - OVERSCAN);
    const last = Math.min(n - 1, first + visible + 2 * OVERSCAN);
    if (first !== this.first || last !== this.last || this.body.childElementCount !== Math.max(0, last - first + 1) + 2) {
      this.first = first;
      this.last = last;
      const keep = new Set<string>();
      const trs: HTMLTableRowElement[] = [];
      for (let i = first; i <= last; i++) {
        const r = this.sorted[i]!;
        keep.add(r.id);
        const row = this.rowOf(r);
        row.tr.setAttribute('aria-rowindex', String(i + 2));
        trs.push(row.tr);
      }
      for (const id of this.rows.keys()) if (!keep.has(id)) this.rows.delete(id);
      this.setSpacer(this.above, first * this.rowPx);
      this.setSpacer(this.below, Math.max(0, n - 1 - last) * this.rowPx);
      this.body.replaceChildren(this.above, ...trs, this.below);
      this.measure();
    }
    for (let i = first; i <= last; i++) {
      const r = this.sorted[i]!;
      this.update(this.rowOf(r), r);
    }
  }

  /** Takes the row height from a rendered row (CSS fixes it; zoom or fonts may change it). */
  private measure(): void {
    const tr = this.body.querySelector<HTMLTableRowElement>('tr.robot-row');
    const px = tr?.getBoundingClientRect().height ?? 0;
    if (px > 0 && Math.abs(px - this.rowPx) > 0.5) {
      this.rowPx = px;
      this.first = 0;
      this.last = -1;
      this.renderWindow();
    }
  }

  private headerPx(): number {
    return this.table.tHead?.getBoundingClientRect().height ?? 0;
  }

  private setSpacer(tr: HTMLTableRowElement, px: number): void {
    tr.hidden = px === 0;
    // CSSOM, not a style attribute: the page's CSP allows no inline style attribute.
    (tr.firstElementChild as HTMLElement).style.height = `${px}px`;
  }

  /**
   * Tab from the last rendered row (or Shift+Tab from the first) would leave the list while robots
   * remain beyond it: scroll one row on and focus that row's name instead.
   */
  private tab(e: KeyboardEvent): void {
    if (e.key !== 'Tab') return;
    const tr = (e.target as HTMLElement).closest('tr.robot-row');
    if (!(tr instanceof HTMLTableRowElement)) return;
    const index = Number(tr.getAttribute('aria-rowindex')) - 2;
    const buttons = [...tr.querySelectorAll('button')];
    const next = e.shiftKey ? index - 1 : index + 1;
    const leaving = e.shiftKey ? e.target === buttons[0] : e.target === buttons[buttons.length - 1];
    if (!leaving || next < 0 || next >= this.sorted.length) return;
    if (next >= this.first && next <= this.last) return;
    e.preventDefault();
    this.scroller.scrollTop += (e.shiftKey ? -1 : 1) * this.rowPx;
    this.renderWindow();
    const target = this.rows.get(this.sorted[next]!.id);
    const buttonsNext = target === undefined ? [] : [...target.tr.querySelectorAll('button')];
    (e.shiftKey ? buttonsNext[buttonsNext.length - 1] : buttonsNext[0])?.focus();
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

/** A row that stands for the rows not rendered (hidden from assistive technology). */
function spacer(): HTMLTableRowElement {
  return h('tr', { class: 'robot-spacer', 'aria-hidden': 'true' }, h('td', { colspan: 6 }));
}

/** Sets text only when it changed (no layout work for an unchanged cell). */
function text(el: HTMLElement, value: string): void {
  if (el.textContent !== value) el.textContent = value;
}

function set(el: HTMLElement, attr: string, value: string): void {
  if (el.getAttribute(attr) !== value) el.setAttribute(attr, value);
}
