/**
 * Robot commands the page sent, each with its delivery state followed live: the gateway answers a
 * command with its first state (dispatched, deferred for an offline robot), then the page reads
 * GET /v1/robot-commands/{id} until the robot acknowledged or rejected it (docs/commands.md).
 */
import type { Api } from './api.js';
import { clock, h, replace, shortId } from './dom.js';
import type { Command, RobotCommandOutcome } from './types.js';

const POLL_MS = 500;
/**
 * Commands read per poll: a stop-all of a large fleet then costs at most 10 reads a second, far
 * below the session's rate limit (100 a second by default), and each command is still read every
 * few seconds.
 */
const READS_PER_POLL = 5;
/** A command still not final after this is shown as it is and no longer read. */
const FOLLOW_FOR_MS = 120_000;
const FINAL = new Set(['agent_received', 'agent_rejected', 'timed_out']);
/** Rows kept in the panel (oldest dropped). */
const MAX_ROWS = 50;

/** One command the page sent, with its latest known delivery state. */
export interface Row {
  commandId: string | null;
  /** Until when the delivery state is read (0: final or never). */
  followUntilMs: number;
  robot: string;
  action: string;
  state: string;
  detail: string;
  atMs: number;
}

export class CommandLog {
  readonly el = h('section', { class: 'panel commands', 'aria-label': 'Commands' });
  private readonly rows: Row[] = [];
  /** Rows whose delivery is not final yet, read round robin by one timer. */
  private pending: Row[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly api: Api,
    private readonly robotName: (id: string) => string,
  ) {
    this.render();
  }

  /** Called after every change of a row (the fleet bar shows a bulk command's delivery from it). */
  onChange: (() => void) | null = null;

  /** Records the outcomes of one request and follows each delivery until it is final; returns its rows. */
  track(action: string, outcomes: RobotCommandOutcome[]): readonly Row[] {
    const added: Row[] = [];
    for (const o of outcomes) {
      const row: Row = {
        commandId: o.delivery?.commandId ?? null,
        followUntilMs: 0,
        robot: o.robotId,
        action,
        state: o.delivery?.state ?? (o.success ? 'sent' : 'failed'),
        detail: o.error?.message ?? '',
        atMs: Date.now(),
      };
      this.rows.unshift(row);
      added.push(row);
      if (row.commandId !== null && !FINAL.has(row.state)) {
        row.followUntilMs = Date.now() + FOLLOW_FOR_MS;
        this.pending.push(row);
      }
    }
    this.rows.splice(MAX_ROWS);
    // Only rows still shown are read: a stop-all of a large fleet follows the newest MAX_ROWS.
    const shown = new Set(this.rows);
    this.pending = this.pending.filter((r) => shown.has(r));
    if (this.pending.length > 0 && this.timer === null) this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.render();
    return added;
  }

  /** Stops reading delivery states (logout, another fleet). */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.pending = [];
  }

  /** Records a request that failed as a whole (no per-robot outcome). */
  failed(action: string, robot: string, message: string): void {
    this.rows.unshift({ commandId: null, followUntilMs: 0, robot, action, state: 'failed', detail: message, atMs: Date.now() });
    this.rows.splice(MAX_ROWS);
    this.render();
  }

  private polling = false;

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    const now = Date.now();
    this.pending = this.pending.filter((r) => r.followUntilMs > now);
    const batch = this.pending.splice(0, READS_PER_POLL);
    let changed = false;
    await Promise.all(
      batch.map(async (row) => {
        try {
          const c = await this.api.get<Command>(`/v1/robot-commands/${row.commandId ?? ''}`);
          changed ||= c.state !== row.state;
          row.state = c.state;
          row.detail = c.rejectReason ?? (c.retryBudgetExhausted ? 'retry budget exhausted' : '');
          if (FINAL.has(c.state) || c.retryBudgetExhausted) row.followUntilMs = 0;
        } catch (err) {
          row.detail = (err as Error).message;
          row.followUntilMs = 0;
          changed = true;
        }
        // Not final: to the back of the queue, read again after the others.
        if (row.followUntilMs > 0) this.pending.push(row);
      }),
    );
    this.polling = false;
    if (this.pending.length === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
    if (changed) this.render();
  }

  private render(): void {
    this.onChange?.();
    replace(
      this.el,
      h('h2', {}, 'Commands'),
      this.rows.length === 0
        ? h('p', { class: 'muted' }, 'No command sent from this page yet.')
        : h(
            'table',
            {},
            h('thead', {}, h('tr', {}, h('th', { class: 'col-time' }, 'time'), h('th', {}, 'robot'), h('th', {}, 'action'), h('th', {}, 'delivery'))),
            h(
              'tbody',
              {},
              ...this.rows.map((r) =>
                h(
                  'tr',
                  { class: 'command-row', 'data-command-id': r.commandId ?? '', 'data-robot-id': r.robot, 'data-action': r.action, 'data-state': r.state },
                  h('td', { class: 'col-time' }, clock(r.atMs)),
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
