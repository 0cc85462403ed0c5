// Diagnostic stand-in for `fleetgw serve` in telemetry-throughput.mjs (--ingest-stats, and always with
// the replay generator): the same startGateway() the CLI runs, plus one JSON line of the ingest's
// counters every --stats-ms, so a run shows which stage holds the backlog (batch being packed, decode
// tasks in flight, rows waiting for an insert, inserts in flight, robots paused). Same stdout contract
// as serve: a ready line, SIGTERM drains, {"event":"stopped"}, exit 0.
//
// The ready line also lists the threads that existed before anything was loaded (`startupTids`: the
// main thread and V8's platform threads, which run GC helper and compiler jobs) and the stats lines
// the decode workers' thread ids, so the benchmark can group CPU per thread from /proc.
//
// --loop-delay adds the event loop's delay to each stats line. It is off by default: its 5 ms
// sampling timer wakes the loop 200 times a second, which is a measurable share of an idle or
// lightly loaded gateway's CPU (bench/notes/telemetry-ingest.md, "Fixed costs").
//
//   node bench/lib/gateway-child.mjs --data-dir DIR [--clickhouse-url URL] [--stats-ms 1000] [--loop-delay] [--gc-stats]
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';

// Before any other module loads (static imports would be evaluated first, hence the dynamic ones).
const startupTids = readdirSync('/proc/self/task').map(Number);
const { parseConfig } = await import('../../dist/config.js');
const { startGateway } = await import('../../dist/gateway/gateway.js');
const { parseArgs } = await import('./procs.mjs');
const { pino } = await import('pino');

const opts = parseArgs(process.argv.slice(2), { 'data-dir': '', 'clickhouse-url': '', 'stats-ms': 1000, 'loop-delay': false, 'gc-stats': false });
const env = parseConfig(process.env);
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const gateway = await startGateway({
  dataDir: resolve(opts['data-dir']),
  host: '127.0.0.1',
  httpPort: 0,
  grpcPort: 0,
  clickhouseUrl: opts['clickhouse-url'] === '' ? null : opts['clickhouse-url'],
  tls: 'insecure',
  tunables: env.tunables,
  telemetry: { decoder: env.telemetryDecoder, hugePages: env.hugePages, clickhouseInsertFormat: env.clickhouseInsertFormat },
  // startGateway takes a pino logger; warnings and errors to stderr, as serve would.
  log: pino({ level: 'warn' }, pino.destination(2)),
});
emit({ event: 'ready', http: gateway.httpUrl, grpc: gateway.grpcAddress, telemetryStore: gateway.telemetryStore, telemetryDecoder: gateway.telemetryDecoder, startupTids });
// Event-loop delay since the previous stats line (ms): the live fan-out runs on this loop.
const { monitorEventLoopDelay } = await import('node:perf_hooks');
const eld = opts['loop-delay'] ? monitorEventLoopDelay({ resolution: 5 }) : null;
eld?.enable();
// --gc-stats: the main thread's GCs since start by kind (count and pause ms), in each stats line. Off by
// default: the observer's callback is a little work per GC in the measured process.
const { PerformanceObserver, constants: pc } = await import('node:perf_hooks');
const gcKinds = { [pc.NODE_PERFORMANCE_GC_MINOR]: 'minor', [pc.NODE_PERFORMANCE_GC_MAJOR]: 'major', [pc.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [pc.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
const gc = opts['gc-stats'] ? {} : undefined;
if (gc) {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const k = gcKinds[e.detail?.kind] ?? 'other';
      const g = (gc[k] ??= { n: 0, ms: 0 });
      g.n++;
      g.ms += e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
}
const timer = setInterval(() => {
  const loopDelayMs = eld ? { p50: eld.percentile(50) / 1e6, p99: eld.percentile(99) / 1e6, max: eld.max / 1e6 } : undefined;
  eld?.reset();
  const gcOut = gc && Object.fromEntries(Object.entries(gc).map(([k, g]) => [k, { n: g.n, ms: Math.round(g.ms * 100) / 100 }]));
  // With --gc-stats also the heap and external memory (MiB) now: what V8's GC heuristics see.
  if (gcOut) {
    const m = process.memoryUsage();
    gcOut.mem = { heapUsed: m.heapUsed >> 20, heapTotal: m.heapTotal >> 20, external: m.external >> 20, arrayBuffers: m.arrayBuffers >> 20 };
  }
  emit({ event: 'stats', tMs: Date.now(), loopDelayMs, gc: gcOut, ...gateway.ingest.stats(), nativeInsert: gateway.ingest.sampleStore.nativeStats?.() ?? null });
}, opts['stats-ms']);
await new Promise((done) => {
  process.once('SIGTERM', done);
  process.once('SIGINT', done);
});
clearInterval(timer);
await gateway.close();
emit({ event: 'stopped', tMs: Date.now(), ...gateway.ingest.stats() });
process.exit(0);
