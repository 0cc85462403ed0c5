/**
 * Follows mission runs from the robots' reports (MissionStatus on the robot link, and the Hello's
 * `activeMissions` after a reconnect) and keeps each RunRecord current in LMDB until it ends.
 *
 * Policies:
 * - A report is applied only for a run the gateway created, from the robot it was given to; others
 *   are counted and ignored (a robot cannot touch another robot's run).
 * - Finished runs are final: later reports for them are ignored.
 * - Progress writes are asynchronous single puts (in call order); state changes add an event, and
 *   progress adds a `run.progress` event at each new step and at each 25 % boundary, so the
 *   timeline stays readable for long runs.
 * - Reconnect: a run the gateway believes is `running` or `paused` on a robot whose Hello does not
 *   list it is ended as `failed` with detail `lost_by_robot` (the robot restarted without it).
 *   So is a `starting` run whose MissionStart the robot had acknowledged (`startAcknowledged`);
 *   a `starting` run without an ack is left alone: its MissionStart may still be on its way.
 * - In memory: the active runs only (bounded by the number of robots: one active run per robot).
 */
import type { EventLog } from '../../events/index.js';
import type { MissionStatus } from '../../gen/fleetgw/v1/robot_link_pb.js';
import type { RobotLink } from '../../protocol/robot-link.js';
import type { Clock } from '../clock.js';
import type { Store } from '../../store/lmdb.js';
import type { RunRecord, RunState } from './records.js';
import { isFinished, loadActiveRuns, putNewRun, saveRun } from './runs.js';
import { runEvent } from './timeline.js';

const REPORTED_STATES: ReadonlySet<string> = new Set(['running', 'paused', 'completed', 'failed', 'cancelled', 'aborted']);

export type RunChangeListener = (run: RunRecord, previous: RunState) => void;

export interface RunTrackerStats {
  active: number;
  reportsApplied: number;
  reportsIgnored: number;
}

export class RunTracker {
  private readonly active = new Map<string, RunRecord>();
  private readonly byRobot = new Map<string, string>();
  private readonly advertised = new Map<string, readonly string[]>();
  private readonly listeners: RunChangeListener[] = [];
  private readonly unlisten: () => void;
  private applied = 0;
  private ignored = 0;

  constructor(
    private readonly store: Store,
    private readonly events: EventLog,
    private readonly clock: Clock,
    link: Pick<RobotLink, 'listen'>,
    /** True when the run's MissionStart was acknowledged by the robot's agent (default: never known). */
    private readonly startAcknowledged: (run: RunRecord) => boolean = () => false,
  ) {
    for (const r of loadActiveRuns(store)) this.track(r);
    this.unlisten = link.listen({
      onOnline: (robotId, info) => {
        // The actions of its command policy are advertised capabilities too (one meaning of
        // capability: docs/agent-read.md, "Capabilities").
        this.advertised.set(robotId, [...new Set([...info.capabilities, ...(info.policy?.actions.map((a) => a.name) ?? [])])]);
        this.reconcile(robotId, info.activeMissions ?? []);
      },
      onMissionStatus: (robotId, status) => this.apply(robotId, status),
    });
  }

  /** Called on every state change of a run (after its record was updated in memory). */
  onChange(fn: RunChangeListener): void {
    this.listeners.push(fn);
  }

  close(): void {
    this.unlisten();
  }

  /** Capabilities the robot advertised in its latest Hello, its policy's actions included (empty before the first). */
  advertisedCapabilities(robotId: string): readonly string[] {
    return this.advertised.get(robotId) ?? [];
  }

  /** The run the robot is executing or starting, if any. */
  activeRunOf(robotId: string): RunRecord | undefined {
    const id = this.byRobot.get(robotId);
    return id === undefined ? undefined : this.active.get(id);
  }

  /** Active runs of one fleet. */
  activeRunsOfFleet(fleetId: string): RunRecord[] {
    return [...this.active.values()].filter((r) => r.fleetId === fleetId);
  }

  /** A run by id: the live copy while active, else the stored record. */
  get(runId: string): RunRecord | undefined {
    return this.active.get(runId) ?? this.store.runs.get(runId);
  }

  stats(): RunTrackerStats {
    return { active: this.active.size, reportsApplied: this.applied, reportsIgnored: this.ignored };
  }

  /**
   * Stores a new run (and whatever `alsoWrite` adds, in the same transaction) and tracks it at once,
   * so the robot counts as busy before the write commits. `announce` runs once the write committed,
   * before `run.created` is appended: the caller's cause (a schedule choosing the robot) reads first
   * in the timeline.
   */
  async create(run: RunRecord, alsoWrite: () => void, announce?: () => void): Promise<void> {
    this.track(run);
    try {
      await this.store.root.transaction(() => {
        putNewRun(this.store, run);
        alsoWrite();
      });
    } catch (err) {
      this.untrack(run);
      throw err;
    }
    announce?.();
    runEvent(this.events, run, run.startedAtMs, 'run.created', { robotId: run.robotId, missionId: run.missionId });
  }

  /** Ends a run from the gateway's side (e.g. its MissionStart was rejected). */
  finish(runId: string, state: 'failed' | 'aborted', detail: string): void {
    const r = this.active.get(runId);
    if (!r) return;
    this.change(r, { state, detail }, 'gateway');
  }

  /** Records the command that started `run` (its MissionStart), once submitted. */
  startedBy(run: RunRecord, commandId: string): void {
    run.startCommandId = commandId;
    this.save(run);
  }

  /** Records that a cancel or abort was requested (the robot's report ends the run). */
  markCancelRequested(runId: string, verb: 'cancel' | 'abort'): void {
    const r = this.active.get(runId);
    if (!r) return;
    r.cancelRequested = verb;
    this.save(r);
  }

  /** Writes `r` behind the caller (in call order); a failure is logged and counted by the store. */
  private save(r: RunRecord): void {
    this.store.writes.watch(saveRun(this.store, r, false), 'missions', 'runs');
  }

  private track(r: RunRecord): void {
    this.active.set(r.runId, r);
    this.byRobot.set(r.robotId, r.runId);
  }

  private untrack(r: RunRecord): void {
    this.active.delete(r.runId);
    if (this.byRobot.get(r.robotId) === r.runId) this.byRobot.delete(r.robotId);
  }

  private apply(robotId: string, st: MissionStatus): void {
    const r = this.active.get(st.runId);
    if (!r || r.robotId !== robotId || !REPORTED_STATES.has(st.state)) {
      this.ignored++;
      return;
    }
    this.applied++;
    this.change(r, {
      state: st.state as RunState,
      progressPct: clampPct(st.progressPct),
      stepIndex: st.stepIndex,
      remainingDistanceM: Number.isFinite(st.remainingDistanceM) ? st.remainingDistanceM : null,
      etaS: Number.isFinite(st.etaS) ? st.etaS : null,
      ...(st.detail !== '' ? { detail: st.detail } : {}),
    }, 'robot');
  }

  private reconcile(robotId: string, reported: MissionStatus[]): void {
    const listed = new Set(reported.map((m) => m.runId));
    for (const st of reported) this.apply(robotId, st);
    const mine = this.activeRunOf(robotId);
    if (mine && !listed.has(mine.runId) && (mine.state === 'running' || mine.state === 'paused' || (mine.state === 'starting' && this.startAcknowledged(mine)))) {
      runEvent(this.events, mine, this.clock.now(), 'run.lost', { robotId });
      this.change(mine, { state: 'failed', detail: 'lost_by_robot' }, 'gateway');
    }
  }

  private change(r: RunRecord, patch: Partial<RunRecord>, source: 'robot' | 'gateway'): void {
    const now = this.clock.now();
    const previous = r.state;
    const prevStep = r.stepIndex;
    const prevQuarter = Math.floor(r.progressPct / 25);
    Object.assign(r, patch);
    if (source === 'robot') r.lastReportAtMs = now;
    const finished = isFinished(r.state);
    if (finished) {
      r.endedAtMs = now;
      this.untrack(r);
    }
    this.save(r);
    if (r.state !== previous) {
      runEvent(this.events, r, now, `run.${r.state}`, { robotId: r.robotId, progressPct: r.progressPct, stepIndex: r.stepIndex, detail: r.detail, cancelRequested: r.cancelRequested });
      for (const fn of this.listeners) fn(r, previous);
    } else if (r.stepIndex !== prevStep || Math.floor(r.progressPct / 25) !== prevQuarter) {
      runEvent(this.events, r, now, 'run.progress', { progressPct: r.progressPct, stepIndex: r.stepIndex, remainingDistanceM: r.remainingDistanceM, etaS: r.etaS });
    }
  }
}

function clampPct(v: number): number {
  return Number.isFinite(v) ? Math.min(100, Math.max(0, v)) : 0;
}
