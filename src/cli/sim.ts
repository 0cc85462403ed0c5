/**
 * `fleetgw sim`: runs simulated robots against a gateway's robot link until SIGTERM/SIGINT.
 */
import { readFileSync } from 'node:fs';
import { loadRobotsFile, runSimFleet } from '../sim/index.js';
import { opt, parseStrict, positiveInt, req } from './args.js';
import { UsageError } from './usage.js';

/** Parses sim's options and runs the simulated fleet until a termination signal. */
export async function runSimCommand(argv: string[], out: (line: string) => void): Promise<number> {
  const v = parseStrict(argv, {
    grpc: { type: 'string' }, 'robots-file': { type: 'string' }, 'robot-id': { type: 'string' },
    'robot-token': { type: 'string' }, hz: { type: 'string' }, 'tls-ca': { type: 'string' },
  });
  const grpc = req(v, 'grpc');
  if (!/^(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5}$/.test(grpc)) throw new UsageError('--grpc must be HOST:PORT');
  const file = opt(v, 'robots-file');
  const robotId = opt(v, 'robot-id');
  const robotToken = opt(v, 'robot-token');
  if (file !== undefined && (robotId !== undefined || robotToken !== undefined)) {
    throw new UsageError('use either --robots-file or --robot-id with --robot-token, not both');
  }
  if (file === undefined && (robotId === undefined || robotToken === undefined)) {
    throw new UsageError('--robots-file, or --robot-id with --robot-token, is required');
  }
  let robots: { robotId: string; robotToken: string }[];
  try {
    robots = file !== undefined ? loadRobotsFile(file) : [{ robotId: robotId ?? '', robotToken: robotToken ?? '' }];
  } catch (err: unknown) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const hz = positiveInt(opt(v, 'hz'), 'hz') ?? 10;
  const caFile = opt(v, 'tls-ca');
  const fleet = runSimFleet({
    grpc,
    robots,
    hz,
    ...(caFile !== undefined ? { tlsRootCert: readFileSync(caFile) } : {}),
    log: (line: string) => process.stderr.write(`${line}\n`),
  });
  out(JSON.stringify({ event: 'sim-started', robots: robots.length, hz }));
  await new Promise<void>((done) => {
    process.once('SIGTERM', () => done());
    process.once('SIGINT', () => done());
  });
  await fleet.stop();
  return 0;
}
