/**
 * Mission execution on a simulated robot: MissionStart runs the template's steps one after the
 * other on the RobotModel, the robot reports MissionStatus (state, progress %, step index, remaining
 * distance, estimated time remaining) on every state change and every 500 ms while it runs, and
 * MissionControl pauses, resumes, cancels or aborts the run.
 *
 * Steps: `wait` holds for `config.seconds` (default 1); every other kind (`drive_to`, `mow_area`,
 * `dock`, ...) drives to `config.x_m`/`config.y_m` (depot frame) when given, else `config.distance_m`
 * (default 10) straight ahead, using the model's go-to driving (real kinematics, battery drain).
 *
 * Failure paths for tests: {@link SimMissionBehaviour} makes the robot reject every MissionStart
 * (`rejectReason`, acked REJECTED) or fail the run on reaching a step (`failAtStep`, reported as
 * `failed` with `failDetail`).
 *
 * Policies: one run at a time (a second MissionStart is rejected `busy`); a MissionStart for the run
 * already executing is accepted again without restarting it (the gateway may resend after a
 * restart); control for another run id is rejected `unknown_run`.
 */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import type { CommandResult as HandlerResult } from '../agent/command-processor.js';
import type { SampleInput } from '../agent/sample-encoder.js';
import { MissionControl_Action, MissionStatusSchema, type MissionControl, type MissionStart, type MissionStatus } from '../gen/fleetgw/v1/robot_link_pb.js';
import { DEPOT } from './geo.js';
import type { RobotModel } from './robot-model.js';

export interface SimMissionBehaviour {
  /** Reject every MissionStart with this reason. */
  rejectReason?: string | null;
  /** Fail the run when it reaches this step index. */
  failAtStep?: number | null;
  failDetail?: string;
}

type StatusInit = MessageInitShape<typeof MissionStatusSchema>;

const REPORT_EVERY_MS = 500;
const ARRIVE_M = 2.5;
const DEFAULT_DRIVE_M = 10;

interface Step {
  kind: string;
  waitS: number | null;
  target: { x: number; y: number } | null;
  distanceM: number;
}

interface ActiveRun {
  runId: string;
  missionId: string;
  steps: Step[];
  index: number;
  /** Seconds spent in the current wait step. */
  waited: number;
  /** Distance to the target when the current drive step began. */
  startDist: number;
  paused: boolean;
  lastReportMs: number;
}

export class SimMissionRunner {
  behaviour: SimMissionBehaviour = {};
  private run: ActiveRun | null = null;
  private lastTickMs = 0;
  /** Runs finished, newest last (bounded): what a test can inspect. */
  readonly finished: { runId: string; state: string }[] = [];

  constructor(
    private readonly model: RobotModel,
    private readonly send: (status: StatusInit) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  get busy(): boolean {
    return this.run !== null;
  }

  /** The running mission as the Hello's `activeMissions` re-announces it after a reconnect. */
  activeMissions(): MissionStatus[] {
    return this.run ? [create(MissionStatusSchema, this.status(this.run, this.run.paused ? 'paused' : 'running', ''))] : [];
  }

  /**
   * The running mission as every telemetry sample carries it (null when no run is active). A real
   * robot reports its mission in its samples as well as in MissionStatus; without it the stored
   * snapshot (`GET /v1/robots/{id}`, the live stream's `mission`) would stay null during a run.
   */
  sampleMission(): SampleInput['mission'] {
    const r = this.run;
    if (!r) return null;
    const st = this.status(r, r.paused ? 'paused' : 'running', '');
    return {
      runId: r.runId,
      missionState: st.state ?? 'running',
      progressPct: st.progressPct ?? 0,
      stepIndex: st.stepIndex ?? 0,
      remainingDistanceM: st.remainingDistanceM ?? 0,
      etaS: st.etaS ?? 0,
    };
  }

  /** Applies MissionStart. */
  start(m: MissionStart): HandlerResult {
    if (this.run?.runId === m.runId) return { accept: true };
    if (this.behaviour.rejectReason) return { accept: false, reason: this.behaviour.rejectReason };
    if (this.run) return { accept: false, reason: 'busy' };
    const steps = m.steps.length > 0 ? m.steps.map((s) => this.parseStep(s.kind, s.configJson)) : [this.parseStep('wait', '{}')];
    this.run = { runId: m.runId, missionId: m.missionId, steps, index: 0, waited: 0, startDist: 0, paused: false, lastReportMs: 0 };
    this.lastTickMs = this.now();
    this.model.start();
    this.beginStep(this.run);
    this.report(this.run, 'running');
    return { accept: true };
  }

  /** Applies MissionControl. */
  control(c: MissionControl): HandlerResult {
    const r = this.run;
    if (!r || r.runId !== c.runId) return { accept: false, reason: 'unknown_run' };
    switch (c.action) {
      case MissionControl_Action.PAUSE:
        if (!r.paused) {
          r.paused = true;
          this.model.stop('mission paused');
          this.report(r, 'paused');
        }
        return { accept: true };
      case MissionControl_Action.RESUME:
        if (r.paused) {
          r.paused = false;
          this.lastTickMs = this.now();
          this.model.start();
          this.report(r, 'running');
        }
        return { accept: true };
      case MissionControl_Action.CANCEL:
        this.end(r, 'cancelled', 'cancel requested');
        return { accept: true };
      case MissionControl_Action.ABORT:
        this.end(r, 'aborted', 'abort requested');
        return { accept: true };
      default:
        return { accept: false, reason: 'unknown_action' };
    }
  }

  /** Advances the run; called by the fleet's shared timer. */
  tick(): void {
    const r = this.run;
    const now = this.now();
    const dt = Math.max(0, (now - this.lastTickMs) / 1000);
    this.lastTickMs = now;
    if (!r || r.paused) return;
    const step = r.steps[r.index];
    if (!step) return;
    if (this.behaviour.failAtStep !== null && this.behaviour.failAtStep !== undefined && r.index >= this.behaviour.failAtStep) {
      this.end(r, 'failed', this.behaviour.failDetail ?? 'simulated_failure');
      return;
    }
    let done: boolean;
    if (step.waitS !== null) {
      r.waited += dt;
      done = r.waited >= step.waitS;
    } else {
      done = this.distanceTo(step) <= ARRIVE_M;
    }
    if (done) {
      r.index++;
      if (r.index >= r.steps.length) {
        this.end(r, 'completed', '');
        return;
      }
      this.beginStep(r);
      this.report(r, 'running');
      return;
    }
    if (now - r.lastReportMs >= REPORT_EVERY_MS) this.report(r, 'running');
  }

  private parseStep(kind: string, configJson: string): Step {
    let cfg: Record<string, unknown> = {};
    try {
      const v: unknown = configJson === '' ? {} : JSON.parse(configJson);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) cfg = v as Record<string, unknown>;
    } catch {
      // A malformed step config runs with defaults.
    }
    const num = (k: string): number | null => (typeof cfg[k] === 'number' && Number.isFinite(cfg[k]) ? cfg[k] : null);
    if (kind === 'wait') return { kind, waitS: Math.max(0, num('seconds') ?? 1), target: null, distanceM: 0 };
    const x = num('x_m');
    const y = num('y_m');
    const target = x !== null && y !== null ? { x: clampDepot(x), y: clampDepot(y) } : null;
    return { kind, waitS: null, target, distanceM: Math.max(ARRIVE_M + 0.5, num('distance_m') ?? DEFAULT_DRIVE_M) };
  }

  private beginStep(r: ActiveRun): void {
    r.waited = 0;
    const step = r.steps[r.index];
    if (!step || step.waitS !== null) return;
    if (!step.target) {
      const rad = (this.model.headingDeg * Math.PI) / 180;
      step.target = { x: clampDepot(this.model.x + Math.sin(rad) * step.distanceM), y: clampDepot(this.model.y + Math.cos(rad) * step.distanceM) };
    }
    r.startDist = Math.max(this.distanceTo(step), 0.001);
    this.model.goTo({ x: step.target.x, y: step.target.y, headingDeg: null, maxSpeedMps: null });
  }

  private distanceTo(step: Step): number {
    return step.target ? Math.hypot(step.target.x - this.model.x, step.target.y - this.model.y) : 0;
  }

  private end(r: ActiveRun, state: 'completed' | 'failed' | 'cancelled' | 'aborted', detail: string): void {
    this.run = null;
    this.model.start();
    this.model.release();
    this.finished.push({ runId: r.runId, state });
    if (this.finished.length > 64) this.finished.shift();
    this.report(r, state, detail);
  }

  private report(r: ActiveRun, state: string, detail = ''): void {
    r.lastReportMs = this.now();
    this.send(this.status(r, state, detail));
  }

  private status(r: ActiveRun, state: string, detail: string): StatusInit {
    const total = r.steps.length;
    const step = r.steps[r.index];
    let frac = 0;
    let remainingM = 0;
    let etaS = 0;
    const cruise = Math.max(0.5, Math.min(this.model.settings.max_speed_mps, 1.5));
    if (step) {
      if (step.waitS !== null) {
        frac = step.waitS > 0 ? Math.min(1, r.waited / step.waitS) : 1;
        etaS += Math.max(0, step.waitS - r.waited);
      } else {
        const d = this.distanceTo(step);
        frac = Math.min(1, Math.max(0, 1 - d / r.startDist));
        remainingM += d;
        etaS += d / cruise;
      }
      for (const s of r.steps.slice(r.index + 1)) {
        if (s.waitS !== null) etaS += s.waitS;
        else {
          remainingM += s.distanceM;
          etaS += s.distanceM / cruise;
        }
      }
    }
    const pct = state === 'completed' ? 100 : total === 0 ? 0 : ((Math.min(r.index, total) + frac) / total) * 100;
    return {
      runId: r.runId,
      missionId: r.missionId,
      state,
      progressPct: Math.round(pct * 10) / 10,
      stepIndex: Math.min(r.index, Math.max(0, total - 1)),
      remainingDistanceM: state === 'completed' ? 0 : Math.round(remainingM * 10) / 10,
      etaS: state === 'completed' ? 0 : Math.round(etaS * 10) / 10,
      detail,
      tsMs: BigInt(this.now()),
    };
  }
}

function clampDepot(v: number): number {
  const lim = DEPOT.halfSizeM - 5;
  return Math.max(-lim, Math.min(lim, v));
}
