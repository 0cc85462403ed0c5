/**
 * The simulated robot's health: what a real robot's health monitor would report (docs/faults.md).
 *
 * - Drives (`drive_left`, `drive_right`): winding temperature follows the load (speed) with a
 *   thermal lag; now and then one drive runs an overload episode (a stiff bearing) and heats past its
 *   limit: fault `<drive>_overtemp` (error) above 85 C, cleared below 75 C (hysteresis), so it is
 *   raised and then clears on its own as the episode ends.
 * - Battery: `battery_low` (warning) under 20 % until charged past 30 %; `battery_critical` (error)
 *   under 8 %.
 * - Front lidar: short dust episodes degrade it: `lidar_front_degraded` (warning) while they last.
 * - Computer: CPU temperature and load; `computer_overtemp` (warning) above 80 C.
 *
 * Deterministic per robot (seeded by its id) and stepped by the fleet's tick, so tests can drive it.
 */
import { DeviceKind, HealthSeverity } from '../gen/fleetgw/v1/robot_link_pb.js';
import { HealthLevel } from '../gen/fleetgw/v1/telemetry_pb.js';
import type { DeviceHealthInput, HealthFaultInput, HealthState } from '../agent/health-reporter.js';
import { seededRandom } from './geo.js';

const AMBIENT_C = 30;
const DRIVE_LOAD_C_PER_MPS = 15;
const DRIVE_TAU_S = 6;
const OVERLOAD_EXTRA_C = 75;
const DRIVE_LIMIT_C = 85;
const DRIVE_CLEAR_C = 75;
const BATTERY_LOW_PCT = 20;
const BATTERY_OK_PCT = 30;
const BATTERY_CRITICAL_PCT = 8;
const CPU_WARN_C = 80;

/** What the health model reads from the kinematic model each step. */
export interface HealthInputs {
  speedMps: number;
  batteryPct: number;
  charging: boolean;
  cpuTempC: number;
}

interface Episode {
  startS: number;
  endS: number;
}

const DRIVES = ['drive_left', 'drive_right'] as const;

export class SimHealth {
  private readonly rand: () => number;
  private elapsedS = 0;
  private readonly driveTempC = [AMBIENT_C, AMBIENT_C];
  private overload: { drive: 0 | 1; episode: Episode } | null = null;
  private nextOverloadS: number;
  private dust: Episode | null = null;
  private nextDustS: number;
  private readonly raisedAtMs = new Map<string, number>();
  private batteryLow = false;
  private last: HealthInputs = { speedMps: 0, batteryPct: 100, charging: false, cpuTempC: 45 };
  /** Active fault codes and the overall level as of the last state(), for the telemetry sample's `health`. */
  faultCodes: string[] = [];
  level: HealthLevel = HealthLevel.OK;

  constructor(robotId: string) {
    this.rand = seededRandom(`${robotId}:health`);
    this.nextOverloadS = 60 + this.rand() * 240;
    this.nextDustS = 30 + this.rand() * 300;
  }

  /**
   * Starts a drive overload now, lasting `seconds` (also what the seeded schedule does by itself
   * every few minutes): the drive heats past its limit, then cools once the episode ends.
   */
  overloadDrive(drive: 'drive_left' | 'drive_right', seconds: number): void {
    this.overload = { drive: drive === 'drive_left' ? 0 : 1, episode: { startS: this.elapsedS, endS: this.elapsedS + seconds } };
  }

  /** Advances the health model by dtS seconds with the robot's current state. */
  step(dtS: number, inputs: HealthInputs): void {
    this.elapsedS += dtS;
    this.last = inputs;
    const t = this.elapsedS;
    if (this.overload === null && t >= this.nextOverloadS) {
      this.overload = { drive: this.rand() < 0.5 ? 0 : 1, episode: { startS: t, endS: t + 20 + this.rand() * 25 } };
    }
    if (this.overload !== null && t >= this.overload.episode.endS) {
      this.overload = null;
      this.nextOverloadS = t + 180 + this.rand() * 420;
    }
    if (this.dust === null && t >= this.nextDustS) this.dust = { startS: t, endS: t + 8 + this.rand() * 15 };
    if (this.dust !== null && t >= this.dust.endS) {
      this.dust = null;
      this.nextDustS = t + 120 + this.rand() * 480;
    }
    for (const i of [0, 1] as const) {
      const extra = this.overload?.drive === i ? OVERLOAD_EXTRA_C : 0;
      const target = AMBIENT_C + DRIVE_LOAD_C_PER_MPS * inputs.speedMps + extra;
      this.driveTempC[i]! += (target - this.driveTempC[i]!) * Math.min(1, dtS / DRIVE_TAU_S);
    }
    if (inputs.batteryPct < BATTERY_LOW_PCT) this.batteryLow = true;
    else if (inputs.batteryPct > BATTERY_OK_PCT) this.batteryLow = false;
  }

  /** The robot's health now: every active fault and each device's health. */
  state(nowMs: number): HealthState {
    const faults: HealthFaultInput[] = [];
    const devices: DeviceHealthInput[] = [];
    const active = new Set<string>();
    const raise = (code: string, severity: HealthSeverity, component: string, message: string): void => {
      active.add(code);
      let at = this.raisedAtMs.get(code);
      if (at === undefined) {
        at = nowMs;
        this.raisedAtMs.set(code, at);
      }
      faults.push({ code, severity, component, message, raisedAtMs: BigInt(at) });
    };
    for (const i of [0, 1] as const) {
      const id = DRIVES[i];
      const temp = this.driveTempC[i]!;
      const code = `${id}_overtemp`;
      const wasHot = this.raisedAtMs.has(code);
      const hot = temp > DRIVE_LIMIT_C || (wasHot && temp > DRIVE_CLEAR_C);
      if (hot) raise(code, HealthSeverity.ERROR, id, `motor winding ${temp.toFixed(0)} C (limit ${DRIVE_LIMIT_C} C)`);
      devices.push({
        deviceId: id,
        kind: DeviceKind.DRIVE,
        level: hot ? HealthLevel.ERROR : temp > DRIVE_CLEAR_C - 10 ? HealthLevel.WARN : HealthLevel.OK,
        status: hot ? 'overtemp' : 'ok',
        metrics: { temperature_c: round1(temp), speed_mps: round1(this.last.speedMps) },
      });
    }
    const { batteryPct, charging } = this.last;
    if (batteryPct < BATTERY_CRITICAL_PCT) raise('battery_critical', HealthSeverity.CRITICAL, 'battery', `charge ${batteryPct.toFixed(0)} %`);
    if (this.batteryLow) raise('battery_low', HealthSeverity.WARNING, 'battery', `charge ${batteryPct.toFixed(0)} % (returns to dock under ${BATTERY_LOW_PCT} %)`);
    devices.push({
      deviceId: 'battery',
      kind: DeviceKind.BATTERY,
      level: batteryPct < BATTERY_CRITICAL_PCT ? HealthLevel.ERROR : this.batteryLow ? HealthLevel.WARN : HealthLevel.OK,
      status: charging ? 'charging' : this.batteryLow ? 'low' : 'ok',
      metrics: { charge_pct: round1(batteryPct), voltage_v: round1(42 + (12 * batteryPct) / 100) },
    });
    if (this.dust !== null) raise('lidar_front_degraded', HealthSeverity.WARNING, 'lidar_front', 'returns attenuated (dust on the window)');
    devices.push({
      deviceId: 'lidar_front',
      kind: DeviceKind.SENSOR,
      level: this.dust !== null ? HealthLevel.WARN : HealthLevel.OK,
      status: this.dust !== null ? 'degraded' : 'ok',
      metrics: { return_rate_pct: this.dust !== null ? 62 : 99.5 },
    });
    devices.push({ deviceId: 'gnss', kind: DeviceKind.SENSOR, level: HealthLevel.OK, status: 'rtk_fixed', metrics: { satellites: 17 } });
    const cpu = this.last.cpuTempC;
    if (cpu > CPU_WARN_C) raise('computer_overtemp', HealthSeverity.WARNING, 'computer', `CPU ${cpu.toFixed(0)} C`);
    devices.push({
      deviceId: 'computer',
      kind: DeviceKind.COMPUTER,
      level: cpu > CPU_WARN_C ? HealthLevel.WARN : HealthLevel.OK,
      status: 'ok',
      metrics: { cpu_temp_c: round1(cpu), cpu_load_pct: round1(20 + 30 * Math.min(1, this.last.speedMps / 2)) },
    });
    for (const code of [...this.raisedAtMs.keys()]) if (!active.has(code)) this.raisedAtMs.delete(code);
    this.faultCodes = faults.map((f) => f.code!);
    this.level = faults.some((f) => (f.severity ?? 0) >= HealthSeverity.ERROR) ? HealthLevel.ERROR : faults.length > 0 ? HealthLevel.WARN : HealthLevel.OK;
    return { faults, devices };
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
