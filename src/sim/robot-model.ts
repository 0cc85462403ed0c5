/**
 * Kinematic model of one simulated robot: drives between random waypoints in the depot, drains its
 * battery with distance and time, goes to its dock to recharge when low, and on Stop decelerates
 * to zero and holds (mode "paused"; its position no longer changes) until Start.
 *
 * Commanded modes: "autonomous" (random waypoints), "manual" (holds in place, drives only to go-to
 * targets), "docking" (drives to its dock and stays there charging). A go-to switches to manual,
 * drives to the target (speed capped by the command and the max_speed_mps setting), turns to the
 * requested heading and holds.
 */
import { HealthLevel } from '../gen/fleetgw/v1/telemetry_pb.js';
import type { SampleInput } from '../agent/sample-encoder.js';
import type { SimFieldRules } from './field-rules.js';
import { bearingDeg, DEPOT, headingDiff, seededRandom, toLatLon } from './geo.js';

const ACCEL_MPS2 = 0.6;
const STOP_DECEL_MPS2 = 1.5;
const MAX_YAW_DPS = 60;
const ARRIVE_M = 2;
const DRAIN_PCT_PER_M = 0.025;
const DRAIN_PCT_PER_S = 0.002;
const CHARGE_PCT_PER_S = 0.1;
const LOW_BATTERY_PCT = 20;
const CHARGED_PCT = 95;

type Phase = 'driving' | 'to-dock' | 'charging' | 'stopped' | 'holding' | 'go-to';
export type CommandedMode = 'autonomous' | 'manual' | 'docking';

export interface GoToGoal {
  x: number;
  y: number;
  headingDeg: number | null;
  maxSpeedMps: number | null;
}

/** Robot-local settings (SettingSpecs of the simulator's policy). */
export interface SimSettings {
  max_speed_mps: number;
  lights_enabled: boolean;
  obstacle_sensitivity: string;
}

export class RobotModel {
  x: number;
  y: number;
  headingDeg: number;
  speedMps = 0;
  yawRateDps = 0;
  batteryPct: number;
  phase: Phase = 'driving';
  stopReason = '';
  /** The physical emergency stop button (the sim's SIGUSR1/SIGUSR2 press and release it on every robot). */
  estopPressed = false;
  commandedMode: CommandedMode = 'autonomous';
  goal: GoToGoal | null = null;
  settings: SimSettings = { max_speed_mps: 2.0, lights_enabled: false, obstacle_sensitivity: 'medium' };
  /** The field rules the robot obeys (src/sim/field-rules.ts): applied to every driving step. */
  fieldRules: SimFieldRules | null = null;
  /** Advertised actions invoked so far, newest last (bounded). */
  readonly invokedActions: { name: string; arguments: unknown }[] = [];
  private readonly rand: () => number;
  private readonly cruiseMps: number;
  private readonly dock: { x: number; y: number };
  private target: { x: number; y: number };

  constructor(robotId: string, index: number) {
    this.rand = seededRandom(robotId);
    this.cruiseMps = 1.2 + this.rand() * 0.8;
    // Docks stand in a row along the depot's south edge.
    this.dock = { x: -DEPOT.halfSizeM + 5 + (index % 60) * 5, y: -DEPOT.halfSizeM + 3 };
    this.x = this.randomCoord();
    this.y = this.randomCoord();
    this.headingDeg = this.rand() * 360;
    this.batteryPct = 60 + this.rand() * 40;
    this.target = this.randomPoint();
  }

  get mode(): string {
    if (this.phase === 'stopped') return 'paused';
    return this.phase === 'charging' ? 'idle' : this.commandedMode;
  }

  /** Commands a controlled halt; the robot then holds until restarted. */
  stop(reason: string): void {
    this.phase = 'stopped';
    this.stopReason = reason;
  }

  /** Someone pressed the emergency stop: the robot halts and reports `estop` until it is released. */
  pressEstop(): void {
    this.estopPressed = true;
    this.stop('estop');
  }

  /** The emergency stop was released; like a real robot, it holds until told to start. */
  releaseEstop(): void {
    this.estopPressed = false;
  }

  /** Resumes the commanded mode after a stop (no effect when not stopped). */
  start(): void {
    if (this.phase !== 'stopped' || this.estopPressed) return;
    this.stopReason = '';
    this.resume();
  }

  /** Switches the commanded mode; a stopped robot keeps holding until started. */
  setMode(mode: CommandedMode): void {
    this.commandedMode = mode;
    if (mode !== 'manual') this.goal = null;
    if (this.phase !== 'stopped') this.resume();
  }

  /** A one-shot destination (depot frame): switches to manual and drives there unless stopped. */
  goTo(goal: GoToGoal): void {
    this.commandedMode = 'manual';
    this.goal = goal;
    if (this.phase !== 'stopped') this.resume();
  }

  /** Drops the current assignment (go-to target) and returns to autonomous work. */
  release(): void {
    this.goal = null;
    this.commandedMode = 'autonomous';
    if (this.phase !== 'stopped') this.resume();
  }

  /** Clears faults and the assignment; the autonomy stack restarts halted, waiting for Start. */
  forceReset(): void {
    this.goal = null;
    this.commandedMode = 'autonomous';
    this.phase = 'stopped';
    this.stopReason = 'reset';
  }

  /** Records an invoked action (the simulator has no actuators beyond the drive). */
  invoke(name: string, args: unknown): void {
    this.invokedActions.push({ name, arguments: args });
    if (this.invokedActions.length > 32) this.invokedActions.shift();
  }

  private resume(): void {
    if (this.commandedMode === 'docking') {
      this.phase = 'to-dock';
      this.target = this.dock;
    } else if (this.commandedMode === 'manual') {
      this.phase = this.goal ? 'go-to' : 'holding';
      if (this.goal) this.target = { x: this.goal.x, y: this.goal.y };
    } else {
      this.phase = 'driving';
      this.target = this.randomPoint();
    }
  }

  /** Advances the model by dtS seconds. */
  step(dtS: number): void {
    if (this.phase === 'stopped' || this.phase === 'holding') {
      this.speedMps = Math.max(0, this.speedMps - STOP_DECEL_MPS2 * dtS);
      this.yawRateDps = 0;
      this.move(dtS);
      return;
    }
    if (this.phase === 'charging') {
      this.batteryPct = Math.min(100, this.batteryPct + CHARGE_PCT_PER_S * dtS);
      if (this.batteryPct >= CHARGED_PCT && this.commandedMode !== 'docking') {
        this.phase = 'driving';
        this.target = this.randomPoint();
      }
      return;
    }
    if (this.phase === 'driving' && this.batteryPct < LOW_BATTERY_PCT) {
      this.phase = 'to-dock';
      this.target = this.dock;
    }
    const dx = this.target.x - this.x;
    const dy = this.target.y - this.y;
    const dist = Math.hypot(dx, dy);
    if (dist < ARRIVE_M) {
      this.arrive();
      return;
    }
    const diff = headingDiff(this.headingDeg, bearingDeg(dx, dy));
    const yaw = Math.max(-MAX_YAW_DPS * dtS, Math.min(MAX_YAW_DPS * dtS, diff));
    this.headingDeg = (this.headingDeg + yaw + 360) % 360;
    this.yawRateDps = dtS > 0 ? yaw / dtS : 0;
    // Slow down for sharp turns and to arrive without overshooting.
    const cap = Math.min(this.cruiseMps, this.settings.max_speed_mps, this.goal?.maxSpeedMps ?? Infinity);
    const wanted = Math.min(Math.abs(diff) > 45 ? 0.3 : cap, Math.sqrt(2 * ACCEL_MPS2 * dist));
    const dv = Math.max(-ACCEL_MPS2 * dtS, Math.min(ACCEL_MPS2 * dtS, wanted - this.speedMps));
    this.speedMps = Math.max(0, this.speedMps + dv);
    this.fieldRules?.govern(this, dtS);
    this.move(dtS);
  }

  /** The robot's state as a telemetry sample. */
  sample(tsMs: number): SampleInput {
    const { latitude, longitude } = toLatLon(this.x, this.y);
    return {
      tsMs,
      latitude,
      longitude,
      elevationM: DEPOT.elevationM,
      xM: this.x,
      yM: this.y,
      zM: 0,
      headingDeg: this.headingDeg,
      linearMps: this.speedMps,
      angularDps: this.yawRateDps,
      batteryPercent: this.batteryPct,
      voltageV: 42 + (12 * this.batteryPct) / 100,
      charging: this.phase === 'charging',
      mode: this.mode,
      estop: this.estopPressed,
      mission: null, // the mission runner sets it (src/sim/fleet.ts)
      healthLevel: HealthLevel.OK,
      faults: [],
      cpuTempC: 45 + 10 * (this.speedMps / this.cruiseMps),
      gpsFix: 4,
      // One map for the whole depot; the simulated robots carry nothing.
      mapId: DEPOT.mapId,
      loads: null,
    };
  }

  private move(dtS: number): void {
    if (this.speedMps === 0) return;
    const rad = (this.headingDeg * Math.PI) / 180;
    const d = this.speedMps * dtS;
    this.x += Math.sin(rad) * d;
    this.y += Math.cos(rad) * d;
    this.batteryPct = Math.max(0, this.batteryPct - DRAIN_PCT_PER_M * d - DRAIN_PCT_PER_S * dtS);
  }

  private arrive(): void {
    if (this.phase === 'go-to') {
      if (this.goal?.headingDeg != null) this.headingDeg = this.goal.headingDeg;
      this.goal = null;
      this.phase = 'holding';
      return;
    }
    if (this.phase === 'to-dock') {
      this.phase = 'charging';
      this.speedMps = 0;
      this.yawRateDps = 0;
      return;
    }
    this.target = this.randomPoint();
  }

  private randomCoord(): number {
    return (this.rand() * 2 - 1) * (DEPOT.halfSizeM - 10);
  }

  private randomPoint(): { x: number; y: number } {
    // Never a waypoint inside a keep-out zone (a few tries; the last one is kept otherwise, and the
    // governor still keeps the robot out).
    let p = { x: this.randomCoord(), y: this.randomCoord() };
    for (let i = 0; i < 20 && this.fieldRules?.forbids(p.x, p.y) === true; i++) p = { x: this.randomCoord(), y: this.randomCoord() };
    return p;
  }
}
