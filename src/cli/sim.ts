/**
 * `fleetgw sim`: runs simulated robots against a gateway's robot link until SIGTERM/SIGINT.
 * The robots stop themselves when their link has been down for `--stop-on-link-loss-ms` (default
 * 3000; 0 turns it off), as a field robot running the agent with `linkLoss` would. A gateway's
 * planned-restart notice holds that for up to `--max-restart-hold-ms` (default the agent's 300000;
 * 0 ignores the notice, as an agent older than the notice does).
 * A single robot's token comes from `--robot-token-file`, `FLEETGW_ROBOT_TOKEN` or (unsafe on shared
 * hosts) `--robot-token`: see sim-token.ts.
 */
import { readFileSync } from 'node:fs';
import type { FleetgwConfig } from '../config.js';
import { DEFAULT_MAX_RESTART_HOLD_MS } from '../agent/agent.js';
import { createProcessLogger } from '../gateway/logger.js';
import { loadRobotsFile, runSimFleet } from '../sim/index.js';
import { opt, parseStrict, positiveInt, req } from './args.js';
import { LOG_OPTION_SPEC, logOptions } from './log-options.js';
import { resolveRobotToken } from './sim-token.js';
import { runVdaSimCommand } from './sim-vda5050.js';
import { UsageError } from './usage.js';

/** Parses sim's options and runs the simulated fleet until a termination signal. */
export async function runSimCommand(argv: string[], out: (line: string) => void, env: FleetgwConfig): Promise<number> {
  if (argv.includes('--vda5050')) return runVdaSimCommand(argv, out, env);
  const v = parseStrict(argv, {
    grpc: { type: 'string' }, 'robots-file': { type: 'string' }, 'robot-id': { type: 'string' },
    'robot-token': { type: 'string' }, 'robot-token-file': { type: 'string' }, hz: { type: 'string' }, 'tls-ca': { type: 'string' },
    'stop-on-link-loss-ms': { type: 'string' }, 'max-restart-hold-ms': { type: 'string' }, ...LOG_OPTION_SPEC,
  });
  const logging = logOptions(v, env);
  const grpc = req(v, 'grpc');
  if (!/^(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5}$/.test(grpc)) throw new UsageError('--grpc must be HOST:PORT');
  const file = opt(v, 'robots-file');
  const robotId = opt(v, 'robot-id');
  const tokenFlag = opt(v, 'robot-token');
  const tokenFile = opt(v, 'robot-token-file');
  if (file !== undefined && (robotId !== undefined || tokenFlag !== undefined || tokenFile !== undefined)) {
    throw new UsageError('use either --robots-file or --robot-id with its token, not both');
  }
  if (file === undefined && robotId === undefined) {
    throw new UsageError('--robots-file, or --robot-id with --robot-token-file (or FLEETGW_ROBOT_TOKEN), is required');
  }
  let robots: { robotId: string; robotToken: string }[];
  if (robotId !== undefined) {
    const { token, unsafe } = resolveRobotToken({ flag: tokenFlag, file: tokenFile, env: env.robotToken });
    // An argument warning, like a usage error, is one plain line before any logging starts.
    if (unsafe) process.stderr.write('fleetgw: warning: --robot-token is visible to other users of this host (ps); use --robot-token-file or FLEETGW_ROBOT_TOKEN\n');
    robots = [{ robotId, robotToken: token }];
  } else {
    try {
      robots = loadRobotsFile(file ?? '');
    } catch (err: unknown) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
  }
  const hz = positiveInt(opt(v, 'hz'), 'hz') ?? 10;
  const caFile = opt(v, 'tls-ca');
  const stopOnLinkLossMs = linkLossMs(opt(v, 'stop-on-link-loss-ms'));
  const maxRestartHoldMs = restartHoldMs(opt(v, 'max-restart-hold-ms'));
  const { logger, flush } = createProcessLogger(logging);
  // The agent and simulator log text lines (the robot side takes no logger dependency): each is one
  // `info` event of component `sim`.
  const simLog = logger.child({ component: 'sim' });
  const fleet = runSimFleet({
    grpc,
    robots,
    hz,
    ...(caFile !== undefined ? { tlsRootCert: readFileSync(caFile) } : {}),
    ...(stopOnLinkLossMs > 0 ? { stopOnLinkLossMs } : {}),
    maxRestartHoldMs,
    log: (line: string) => simLog.info(line),
  });
  // The physical e-stop button of every simulated robot: SIGUSR1 presses it, SIGUSR2 releases it
  // (README, `fleetgw sim`); the robots report it in their telemetry.
  const press = (): void => fleet.robots.forEach((r) => r.model.pressEstop());
  const release = (): void => fleet.robots.forEach((r) => r.model.releaseEstop());
  process.on('SIGUSR1', press);
  process.on('SIGUSR2', release);
  // Handlers before the started line: a supervisor that reads it may signal at once (stdout to a pipe
  // is synchronous), and a signal with no listener would kill the robots without their last reports.
  const stopped = new Promise<void>((done) => {
    process.once('SIGTERM', () => done());
    process.once('SIGINT', () => done());
  });
  out(JSON.stringify({ event: 'sim-started', robots: robots.length, hz, stopOnLinkLossMs, maxRestartHoldMs }));
  await stopped;
  process.off('SIGUSR1', press);
  process.off('SIGUSR2', release);
  await fleet.stop();
  // What the robots sent, queued and dropped: what a test or an operator compares with the store.
  out(JSON.stringify({ event: 'sim-stopped', ...fleet.stats() }));
  flush();
  return 0;
}

/**
 * Default time a simulated robot tolerates a lost link before pausing itself: long enough to ride
 * out a gateway restart's reconnect, short enough that a robot never drives unsupervised for long.
 */
export const DEFAULT_SIM_STOP_ON_LINK_LOSS_MS = 3000;

function linkLossMs(value: string | undefined): number {
  if (value === undefined) return DEFAULT_SIM_STOP_ON_LINK_LOSS_MS;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError('--stop-on-link-loss-ms must be a whole number of milliseconds (0: off)');
  return Number(value);
}

function restartHoldMs(value: string | undefined): number {
  if (value === undefined) return DEFAULT_MAX_RESTART_HOLD_MS;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError('--max-restart-hold-ms must be a whole number of milliseconds (0: ignore restart notices)');
  return Number(value);
}
