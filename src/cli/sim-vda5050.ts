/**
 * `fleetgw sim --vda5050`: virtual VDA 5050 AGVs (vda-5050-lib) that log in to the gateway's MQTT
 * broker with their robot tokens and run until SIGTERM/SIGINT (src/sim/vda5050/fleet.ts).
 */
import { readFileSync } from 'node:fs';
import type { FleetgwConfig } from '../config.js';
import { createProcessLogger } from '../gateway/logger.js';
import { loadVdaRobotsFile, type VdaSimRobotCredentials } from '../sim/vda5050/robots-file.js';
import { runVdaSimFleet } from '../sim/vda5050/fleet.js';
import { opt, parseStrict, positiveInt, req } from './args.js';
import { LOG_OPTION_SPEC, logOptions } from './log-options.js';
import { UsageError } from './usage.js';

/** The state message period when `--state-ms` is not given: VDA 5050 asks for at least every 30 s; 1 s keeps dashboards fresh. */
export const DEFAULT_VDA_SIM_STATE_MS = 1000;

/** Parses `sim --vda5050`'s options and runs the virtual AGVs until a termination signal. */
export async function runVdaSimCommand(argv: string[], out: (line: string) => void, env: FleetgwConfig): Promise<number> {
  const v = parseStrict(argv, {
    vda5050: { type: 'boolean' }, mqtt: { type: 'string' }, 'robots-file': { type: 'string' }, hz: { type: 'string' },
    'state-ms': { type: 'string' }, interface: { type: 'string' }, 'tls-ca': { type: 'string' }, ...LOG_OPTION_SPEC,
  });
  const logging = logOptions(v, env);
  const brokerUrl = req(v, 'mqtt');
  if (!/^mqtts?:\/\/(\[[0-9a-fA-F:]+\]|[^:/\s]+):\d{1,5}$/.test(brokerUrl)) throw new UsageError('--mqtt must be mqtt://HOST:PORT or mqtts://HOST:PORT');
  let robots: VdaSimRobotCredentials[];
  try {
    robots = loadVdaRobotsFile(req(v, 'robots-file'));
  } catch (err: unknown) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const hz = positiveInt(opt(v, 'hz'), 'hz') ?? 10;
  const stateMs = positiveInt(opt(v, 'state-ms'), 'state-ms') ?? DEFAULT_VDA_SIM_STATE_MS;
  const interfaceName = opt(v, 'interface') ?? 'uagv';
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(interfaceName)) throw new UsageError('--interface must be 1-64 characters of A-Z a-z 0-9 _ . : -');
  const caFile = opt(v, 'tls-ca');
  const { logger, flush } = createProcessLogger(logging);
  const simLog = logger.child({ component: 'sim' });
  const fleet = await runVdaSimFleet({
    brokerUrl,
    robots,
    username: (r) => r.robotId,
    interfaceName,
    stateIntervalMs: stateMs,
    visualizationIntervalMs: Math.max(1, Math.round(1000 / hz)),
    ...(caFile !== undefined ? { ca: readFileSync(caFile) } : {}),
    log: (line: string) => simLog.info(line),
  });
  // Handlers before the started line: a supervisor that reads it may signal at once.
  const stopped = new Promise<void>((done) => {
    process.once('SIGTERM', () => done());
    process.once('SIGINT', () => done());
  });
  out(JSON.stringify({ event: 'sim-started', protocol: 'vda5050', robots: robots.length, hz, stateMs }));
  await stopped;
  await fleet.stop();
  out(JSON.stringify({ event: 'sim-stopped', ...fleet.stats() }));
  flush();
  return 0;
}
