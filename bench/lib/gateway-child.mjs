// Diagnostic stand-in for `fleetgw serve` in telemetry-throughput.mjs (--ingest-stats): the same
// startGateway() the CLI runs, plus one JSON line of the ingest's counters every --stats-ms, so a
// run shows which stage holds the backlog (batch being packed, decode tasks in flight, rows waiting
// for an insert, inserts in flight, robots paused). Same stdout contract as serve: a ready line,
// SIGTERM drains, {"event":"stopped"}, exit 0.
//
//   node bench/lib/gateway-child.mjs --data-dir DIR [--clickhouse-url URL] [--stats-ms 1000]
import { resolve } from 'node:path';
import { tunablesFromEnv } from '../../dist/config.js';
import { startGateway } from '../../dist/gateway/gateway.js';
import { parseArgs } from './procs.mjs';

const opts = parseArgs(process.argv.slice(2), { 'data-dir': '', 'clickhouse-url': '', 'stats-ms': 1000 });
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const gateway = await startGateway({
  dataDir: resolve(opts['data-dir']),
  host: '127.0.0.1',
  httpPort: 0,
  grpcPort: 0,
  clickhouseUrl: opts['clickhouse-url'] === '' ? null : opts['clickhouse-url'],
  tls: 'insecure',
  tunables: tunablesFromEnv(),
  log: (line) => process.stderr.write(`${line}\n`),
});
emit({ event: 'ready', http: gateway.httpUrl, grpc: gateway.grpcAddress, telemetryStore: gateway.telemetryStore });
const timer = setInterval(() => emit({ event: 'stats', tMs: Date.now(), ...gateway.ingest.stats() }), opts['stats-ms']);
await new Promise((done) => {
  process.once('SIGTERM', done);
  process.once('SIGINT', done);
});
clearInterval(timer);
await gateway.close();
emit({ event: 'stopped', tMs: Date.now(), ...gateway.ingest.stats() });
process.exit(0);
