/**
 * A fleet of simulated robots in one process: each robot is a kinematic model plus its own
 * RobotAgent (own stream, own credentials). One shared timer steps every model and sends each
 * robot's samples since the previous tick as one batch, so cost grows with samples, not timers,
 * and 100+ robots at high rates stay cheap.
 */
import { RobotAgent, type AgentStats } from '../agent/agent.js';
import type { SampleInput } from '../agent/sample-encoder.js';
import { applyCommand, initialSimState, SIM_CAPABILITIES, type SimCommandContext } from './commands.js';
import { SimHealth } from './health.js';
import { SimMissionRunner, type SimMissionBehaviour } from './missions.js';
import { SimFieldRules } from './field-rules.js';
import { SimPerception } from './perception.js';
import { simPolicy } from './policy.js';
import { RobotModel } from './robot-model.js';
import type { SimRobotCredentials } from './robots-file.js';

export const SIM_AGENT_VERSION = 'fleetgw-sim/0.1.0';
// Send period: telemetry is at most this stale, and at 50 Hz a message carries 5 samples.
const TICK_MS = 100;
// After an event-loop stall, do not replay more than this much missed time as a burst.
const MAX_CATCH_UP_MS = 1000;
// Health changes slowly: the robot's health state is rebuilt and compared at most this often.
const HEALTH_EVERY_MS = 1000;

export interface SimFleetOptions {
  /** Gateway robot link, `HOST:PORT`. */
  grpc: string;
  robots: SimRobotCredentials[];
  /** Samples per second per robot. */
  hz: number;
  tlsRootCert?: Buffer;
  /** Opt-in: a robot pauses itself after its link has been down this long. */
  stopOnLinkLossMs?: number;
  /** The longest planned-restart hold the robots accept (RobotAgentOptions.maxRestartHoldMs; 0 ignores the notice). */
  maxRestartHoldMs?: number;
  /** Robots (by index) that do not opt into remote configuration / onboard settings. */
  noRemoteConfig?: (index: number) => boolean;
  /** Mission failure paths per robot (reject MissionStart, fail at a step); changeable later via `robot.missions.behaviour`. */
  missionBehaviour?: (index: number) => SimMissionBehaviour;
  /** Report object detections (src/sim/perception.ts); default true. */
  perception?: boolean;
  log?: (line: string) => void;
}

export interface SimRobot {
  readonly robotId: string;
  readonly model: RobotModel;
  readonly agent: RobotAgent;
  /** What the robot's command handlers work with (model, robot-local state, agent). */
  readonly commands: SimCommandContext;
  /** The robot's mission executor. */
  readonly missions: SimMissionRunner;
  /** The robot's health monitor (faults, device health: src/sim/health.ts). */
  readonly health: SimHealth;
  /** What the robot's sensors see and report (null when the fleet runs without perception). */
  readonly perception: SimPerception | null;
}

export interface SimFleetStats extends Omit<AgentStats, 'connected'> {
  robots: number;
  connected: number;
  /** Times a robot paused itself because its link was down too long. */
  linkLossStops: number;
}

export interface SimFleet {
  readonly robots: SimRobot[];
  stats(): SimFleetStats;
  /** Stops the timer and closes every robot's stream. */
  stop(): Promise<void>;
}

/** Starts the simulated robots; they connect in the background and keep reconnecting until stop(). */
export function runSimFleet(opts: SimFleetOptions): SimFleet {
  if (!Number.isFinite(opts.hz) || opts.hz <= 0) throw new Error('hz must be a positive number');
  const log = opts.log ?? (() => {});
  const periodMs = 1000 / opts.hz;
  let linkLossStops = 0;
  const robots: SimRobot[] = opts.robots.map((cred, i) => {
    const model = new RobotModel(cred.robotId, i);
    const fieldRules = new SimFieldRules();
    model.fieldRules = fieldRules;
    // The handlers reach the agent through `ctx`, which exists before the agent does.
    const ctx: { -readonly [K in keyof SimCommandContext]: SimCommandContext[K] } = {
      robotId: cred.robotId,
      model,
      state: initialSimState(),
      agent: { sendCommandResult: () => false, sendMissionStatus: () => false },
      missions: new SimMissionRunner(model, (st) => ctx.agent.sendMissionStatus(st)),
    };
    ctx.missions.behaviour = opts.missionBehaviour?.(i) ?? {};
    const agent = new RobotAgent({
      address: opts.grpc,
      robotId: cred.robotId,
      robotToken: cred.robotToken,
      tlsRootCert: opts.tlsRootCert ?? null,
      agentVersion: SIM_AGENT_VERSION,
      capabilities: SIM_CAPABILITIES,
      policy: simPolicy(!(opts.noRemoteConfig?.(i) ?? false)),
      onCommand: (cmd) => applyCommand(ctx, cmd),
      onFieldRules: (set) => fieldRules.apply(set),
      activeMissions: () => ctx.missions.activeMissions(),
      // A few seconds of samples per robot; older ones are dropped while the link is down.
      maxQueuedSamples: Math.max(256, Math.ceil(opts.hz * 5)),
      ...(opts.stopOnLinkLossMs !== undefined
        ? {
          linkLoss: {
            afterMs: opts.stopOnLinkLossMs,
            onLinkLoss: () => {
              linkLossStops++;
              // An operator (or a test) sees why the robot holds still: it waits for a Start.
              log(`sim: robot ${cred.robotId}: link lost, stopping (paused until started)`);
              model.stop('link lost');
            },
          },
        }
        : {}),
      ...(opts.maxRestartHoldMs !== undefined ? { maxRestartHoldMs: opts.maxRestartHoldMs } : {}),
      log,
    });
    ctx.agent = agent;
    const perception = opts.perception === false ? null : new SimPerception(cred.robotId, model, (frame) => agent.sendObjectDetections(frame));
    return { robotId: cred.robotId, model, agent, commands: ctx, missions: ctx.missions, health: new SimHealth(cred.robotId), perception };
  });

  let nextSampleAt = Date.now();
  let nextHealthAt = nextSampleAt;
  const tick = (): void => {
    const now = Date.now();
    if (now - nextSampleAt > MAX_CATCH_UP_MS) nextSampleAt = now - MAX_CATCH_UP_MS;
    const due: number[] = [];
    for (; nextSampleAt <= now; nextSampleAt += periodMs) due.push(Math.round(nextSampleAt));
    if (due.length === 0) return;
    const dtS = periodMs / 1000;
    const healthDue = now >= nextHealthAt;
    if (healthDue) nextHealthAt = now + HEALTH_EVERY_MS;
    for (const r of robots) {
      if (r.missions.busy) r.missions.tick();
      const mission = r.missions.sampleMission();
      const samples: SampleInput[] = new Array<SampleInput>(due.length);
      for (let i = 0; i < due.length; i++) {
        r.model.step(dtS);
        const sample = r.model.sample(due[i]!);
        // The sample's inline health mirrors the health report (codes and overall level).
        sample.faults = r.health.faultCodes;
        sample.healthLevel = r.health.level;
        sample.mission = mission;
        samples[i] = sample;
      }
      r.agent.sendSamples(samples);
      const last = samples[samples.length - 1]!;
      r.health.step(dtS * due.length, { speedMps: r.model.speedMps, batteryPct: r.model.batteryPct, charging: last.charging, cpuTempC: last.cpuTempC });
      if (healthDue) r.agent.setHealth(r.health.state(now));
      r.perception?.tick(now);
    }
  };
  const timer = setInterval(tick, TICK_MS);
  for (const r of robots) r.agent.start();
  log(`sim: ${robots.length} robot(s) at ${opts.hz} Hz -> ${opts.grpc}`);

  let stopping: Promise<void> | null = null;
  return {
    robots,
    stats: () => {
      const total: SimFleetStats = {
        robots: robots.length, connected: 0, connects: 0, samplesSent: 0, batchesSent: 0, samplesQueued: 0,
        samplesDropped: 0, commandsApplied: 0, commandsRejected: 0, duplicateCommands: 0,
        batchesUnacked: 0, lastBatchSeq: 0, batchesResent: 0, samplesUnackedDropped: 0, restartHolds: 0, linkLossStops,
      };
      for (const r of robots) {
        const s = r.agent.stats();
        if (s.connected) total.connected++;
        total.connects += s.connects;
        total.samplesSent += s.samplesSent;
        total.batchesSent += s.batchesSent;
        total.samplesQueued += s.samplesQueued;
        total.samplesDropped += s.samplesDropped;
        total.batchesUnacked += s.batchesUnacked;
        total.lastBatchSeq = Math.max(total.lastBatchSeq, s.lastBatchSeq);
        total.batchesResent += s.batchesResent;
        total.samplesUnackedDropped += s.samplesUnackedDropped;
        total.commandsApplied += s.commandsApplied;
        total.commandsRejected += s.commandsRejected;
        total.duplicateCommands += s.duplicateCommands;
        total.restartHolds += s.restartHolds;
      }
      return total;
    },
    stop: () => {
      stopping ??= (async () => {
        clearInterval(timer);
        await Promise.all(robots.map((r) => r.agent.stop()));
      })();
      return stopping;
    },
  };
}
