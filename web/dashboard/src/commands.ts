/**
 * Robot commands the page sent, each with its delivery state followed live: the gateway answers a
 * command with its first state (dispatched, deferred for an offline robot), then the page reads
 * GET /v1/robot-commands/{id} until the robot acknowledged or rejected it (docs/commands.md).
 */
import type { Api } from './api.js';
import { clock, h, replace, shortId } from './dom.js';
import type { Command, RobotCommandOutcome } from './types.js';

const POLL_MS = 500;
/** A command still not final after this is shown as it is and no longer read. */
const FOLLOW_FOR_MS = 120_000;
const FINAL = new Set(['agent_received', 'agent_rejected', 'timed_out']);
/** Rows kept in the panel (oldest dropped). */
const MAX_ROWS = 50;

interface Row {
  commandId: string | null;
  robot: string;
  action: string;
  state: string;
  detail: string;
  atMs: number;
}

export class CommandLog {
  readonly el = h('section', { class: 'panel commands', 'aria-label': 'Commands' });
  private readonly rows: Row[] = [];

  constructor(
    private readonly api: Api,
    private readonly robotName: (id: string) => string,
  ) {
    this.render();
  }

  /** Records the outcomes of one request and follows each delivery until it is final. */
  track(action: string, outcomes: RobotCommandOutcome[]): void {
    for (const o of outcomes) {
      const row: Row = {
        commandId: o.delivery?.commandId ?? null,
        robot: o.robotId,
        action,
        state: o.delivery?.state ?? (o.success ? 'sent' : 'failed'),
        detail: o.error?.message ?? '',
        atMs: Date.now(),
      };
      this.rows.unshift(row);
      if (row.commandId !== null && !FINAL.has(row.state)) void this.follow(row);
    }
    this.rows.splice(MAX_ROWS);
    this.render();
  }

  /** Records a request that failed as a whole (no per-robot outcome). */
  failed(action: string, robot: string, message: string): void {
    this.rows.unshift({ commandId: null, robot, action, state: 'failed', detail: message, atMs: Date.now() });
    this.rows.splice(MAX_ROWS);
    this.render();
  }

  private async follow(row: Row): Promise<void> {
    const end = Date.now() + FOLLOW_FOR_MS;
    while (Date.now() < end) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      try {
        const c = await this.api.get<Command>(`/v1/robot-commands/${row.commandId ?? ''}`);
        const changed = c.state !== row.state;
        row.state = c.state;
        row.detail = c.rejectReason ?? (c.retryBudgetExhausted ? 'retry budget exhausted' : '');
        if (changed) this.render();
        if (FINAL.has(c.state) || c.retryBudgetExhausted) return;
      } catch (err) {
        row.detail = (err as Error).message;
        this.render();
        return;
      }
    }
  }

  private render(): void {
    replace(
      this.el,
      h('h2', {}, 'Commands'),
      this.rows.length === 0
        ? h('p', { class: 'muted' }, 'No command sent from this page yet.')
        : h(
            'table',
            {},
            h('thead', {}, h('tr', {}, h('th', {}, 'time'), h('th', {}, 'robot'), h('th', {}, 'action'), h('th', {}, 'delivery'))),
            h(
              'tbody',
              {},
              ...this.rows.map((r) =>
                h(
                  'tr',
                  { class: 'command-row', 'data-command-id': r.commandId ?? '', 'data-robot-id': r.robot, 'data-action': r.action, 'data-state': r.state },
                  h('td', {}, clock(r.atMs)),
                  h('td', { title: r.robot }, this.robotName(r.robot) || shortId(r.robot)),
                  h('td', {}, r.action),
                  h('td', { class: `state state-${r.state}` }, r.state, r.detail ? h('span', { class: 'muted' }, ` ${r.detail}`) : null),
                ),
              ),
            ),
          ),
    );
  }
}
