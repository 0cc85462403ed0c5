/**
 * `fleetgw serve`: starts the gateway, prints the ready line, drains on SIGTERM/SIGINT and exits 0.
 * Every log line goes to stderr through the process logger (src/gateway/logger.ts); a gateway that
 * cannot start logs one `fatal` line naming the part and the thing at fault, and exits 1.
 */
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import type { FleetgwConfig } from '../config.js';
import { setStopTraceFile } from '../api/stop-trace.js';
import { setTestFault } from '../missions/fault-points.js';
import { PluginStartError } from '../gateway/compose.js';
import { startGateway, type Gateway } from '../gateway/gateway.js';
import { createProcessLogger } from '../gateway/logger.js';
import { isLoopbackHost } from '../http/tls.js';
import { MAX_RESTART_HOLD_MS } from '../robotlink/restart-notice.js';
import { uwsBuild } from '../http/uws.js';
import { isDatabaseName, parseClickHouseUrl } from '../telemetry/store/index.js';
import { opt, parseStrict, port, req } from './args.js';
import { LOG_OPTION_SPEC, logOptions } from './log-options.js';
import { refusePasswordArgument, resolveClickHouseCredentials, type ClickHouseCredentials } from './clickhouse-credentials.js';
import { UsageError } from './usage.js';
import { refuseVda5050PasswordArgument, VDA5050_OPTION_SPEC, vda5050MapOrigin, vda5050Settings } from './vda5050-options.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_HTTP_PORT = 8443;
export const DEFAULT_GRPC_PORT = 50051;
/** Long enough for a service manager to restart the gateway, short enough that robots are not left unsupervised for long. */
export const DEFAULT_RESTART_GRACE_S = 60;

/** Parses serve's options and runs the gateway until a termination signal. */
export async function runServe(argv: string[], out: (line: string) => void, env: FleetgwConfig): Promise<number> {
  refusePasswordArgument(argv);
  refuseVda5050PasswordArgument(argv);
  const v = parseStrict(argv, {
    'data-dir': { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, 'grpc-port': { type: 'string' },
    'clickhouse-url': { type: 'string' }, 'clickhouse-user': { type: 'string' }, 'clickhouse-password-file': { type: 'string' }, 'tls-cert': { type: 'string' }, 'tls-key': { type: 'string' }, 'insecure-http': { type: 'boolean' },
    'metrics-token-file': { type: 'string' }, 'telemetry-spool-mb': { type: 'string' },
    'clickhouse-cluster': { type: 'string' }, 'clickhouse-shard-urls': { type: 'string' }, 'restart-grace-s': { type: 'string' },
    ...LOG_OPTION_SPEC,
    ...VDA5050_OPTION_SPEC,
  });
  const logging = logOptions(v, env);
  const dataDir = resolve(req(v, 'data-dir'));
  const host = opt(v, 'host') ?? DEFAULT_HOST;
  if (host !== 'localhost' && isIP(host) === 0) throw new UsageError(`--host must be an IP address or localhost, got '${host}'`);
  const httpPort = port(opt(v, 'port'), 'port', DEFAULT_HTTP_PORT);
  const grpcPort = port(opt(v, 'grpc-port'), 'grpc-port', DEFAULT_GRPC_PORT);
  const restartGraceS = restartGrace(opt(v, 'restart-grace-s'));
  const clickhouseUrl = opt(v, 'clickhouse-url');
  const spoolMb = opt(v, 'telemetry-spool-mb');
  if (spoolMb !== undefined && !(/^[1-9][0-9]{0,6}$/.test(spoolMb))) throw new UsageError(`--telemetry-spool-mb must be a whole number of MiB from 1, got '${spoolMb}'`);
  const clickhouseAuth = clickhouseUrl === undefined ? noClickHouseCredentials(v) : clickhouseCredentials(clickhouseUrl, v, env);
  const clickhouseCluster = clusterOption(v, clickhouseUrl);
  const vda5050 = vda5050Settings(v, (msg) => process.stderr.write(`fleetgw: warning: ${msg}\n`));
  const vda5050MapOriginSetting = vda5050MapOrigin(v);
  const certFile = opt(v, 'tls-cert');
  const keyFile = opt(v, 'tls-key');
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  const insecure = v['insecure-http'] === true;
  if (insecure && certFile !== undefined) throw new UsageError('--insecure-http cannot be combined with --tls-cert/--tls-key');
  if (insecure && !isLoopbackHost(host)) throw new UsageError(`--insecure-http is refused on non-loopback host ${host}: serve HTTPS there`);
  // Benchmark and test aids, process-wide and off unless their variable is set.
  setStopTraceFile(env.benchStopTrace);
  setTestFault(env.testFault);

  const { logger, flush, bytes } = createProcessLogger(logging);
  const log = logger.child({ component: 'cli' });
  // A bug that escapes every handler ends the process as Node would (exit 1), but as one fatal log
  // line that reaches stderr before the exit (the log stream is asynchronous).
  process.on('uncaughtException', (err) => {
    // The access lines still buffered go out first, so the fatal line is the log's last.
    flush();
    log.fatal({ err }, `uncaught exception, exiting: ${err.message}`);
    flush();
    process.exit(1);
  });
  let gateway: Gateway;
  try {
    gateway = await startGateway({
      logBytes: bytes,
      dataDir,
      host,
      httpPort,
      grpcPort,
      clickhouseUrl: clickhouseUrl ?? null,
      ...(clickhouseAuth !== null ? { clickhouseAuth } : {}),
      ...(clickhouseCluster !== null ? { clickhouseCluster } : {}),
      tls: insecure ? 'insecure' : certFile !== undefined && keyFile !== undefined ? { certFile: resolve(certFile), keyFile: resolve(keyFile) } : 'self-signed',
      tunables: env.tunables,
      corsOrigins: env.corsOrigins,
      telemetry: { decoder: env.telemetryDecoder, hugePages: env.hugePages, clickhouseInsertFormat: env.clickhouseInsertFormat },
      ...(opt(v, 'metrics-token-file') !== undefined ? { metricsTokenFile: resolve(opt(v, 'metrics-token-file')!) } : {}),
      ...(spoolMb !== undefined ? { telemetrySpoolMaxBytes: Number(spoolMb) * 1024 * 1024 } : {}),
      restartHoldMs: restartGraceS * 1000,
      vda5050,
      ...(vda5050MapOriginSetting !== undefined ? { vda5050MapOrigin: vda5050MapOriginSetting } : {}),
      log: logger,
    });
  } catch (err: unknown) {
    flush();
    // `step` names the plugin whose start failed (everything started before it has been stopped).
    log.fatal({ err, ...(err instanceof PluginStartError ? { step: err.step, ...(err.stuck.length > 0 ? { stuck: err.stuck } : {}) } : {}) }, `fleetgw serve could not start: ${err instanceof Error ? err.message : String(err)}`);
    flush();
    // A stop hook that never settled may hold the event loop (its error line names it): end anyway,
    // a failed start has nothing left to drain.
    if (err instanceof PluginStartError && err.stuck.length > 0) process.exit(1);
    return 1;
  }
  // The signal handlers go in before the ready line: stdout to a pipe is written synchronously, so a
  // supervisor reading the line can send SIGTERM before the next statement runs, and without a
  // listener Node's default action kills the process without draining.
  const stopped = new Promise<void>((done) => {
    const stop = (signal: string): void => {
      log.info({ signal }, `${signal}: draining`);
      done();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  log.info({ http: gateway.httpUrl, grpc: gateway.grpcAddress, node: process.version, uws: uwsBuild.id }, 'gateway ready');
  out(JSON.stringify({ event: 'ready', http: gateway.httpUrl, grpc: gateway.grpcAddress, uws: uwsBuild.id, telemetryStore: gateway.telemetryStore, telemetryDecoder: gateway.telemetryDecoder, telemetrySchemaVersion: gateway.ingest.sampleStore.schema?.to ?? null }));
  await stopped;
  try {
    await gateway.close();
  } catch (err: unknown) {
    flush();
    log.fatal({ err }, `fleetgw serve did not stop cleanly: ${err instanceof Error ? err.message : String(err)}`);
    flush();
    return 1;
  }
  log.info('stopped');
  flush();
  out(JSON.stringify({ event: 'stopped' }));
  return 0;
}

/**
 * `--restart-grace-s`: how long a SIGTERM/SIGINT stop tells the connected robots to hold their
 * link-loss reaction (docs/operations.md, "Upgrading"); 0 sends no notice (robots see a link loss).
 */
function restartGrace(value: string | undefined): number {
  if (value === undefined) return DEFAULT_RESTART_GRACE_S;
  if (!/^\d{1,3}$/.test(value) || Number(value) > MAX_RESTART_HOLD_MS / 1000) {
    throw new UsageError(`--restart-grace-s must be a whole number of seconds from 0 to ${MAX_RESTART_HOLD_MS / 1000}, got '${value}'`);
  }
  return Number(value);
}

/**
 * `--clickhouse-cluster NAME --clickhouse-shard-urls URL,URL…` (docs/scale-out.md): both or neither,
 * and only with `--clickhouse-url` (the database, the user, and the shard reads go to first).
 */
function clusterOption(v: Record<string, string | boolean | undefined>, clickhouseUrl: string | undefined): { name: string; shardUrls: string[] } | null {
  const name = opt(v, 'clickhouse-cluster');
  const list = opt(v, 'clickhouse-shard-urls');
  if (name === undefined && list === undefined) return null;
  if (name === undefined || list === undefined) throw new UsageError('--clickhouse-cluster and --clickhouse-shard-urls go together');
  if (clickhouseUrl === undefined) throw new UsageError('--clickhouse-cluster needs --clickhouse-url (the database, and the shard reads go to first)');
  if (!isDatabaseName(name)) throw new UsageError(`--clickhouse-cluster must be a plain identifier, got '${name}'`);
  const shardUrls = list.split(',').map((u) => u.trim());
  const origins = new Set<string>();
  for (const u of shardUrls) {
    try {
      origins.add(parseClickHouseUrl(u).origin);
    } catch (err: unknown) {
      throw new UsageError(`--clickhouse-shard-urls: ${err instanceof Error ? err.message.replace('--clickhouse-url', 'each URL') : String(err)}`);
    }
  }
  if (origins.size !== shardUrls.length) throw new UsageError('--clickhouse-shard-urls lists a server twice');
  if (!origins.has(parseClickHouseUrl(clickhouseUrl).origin)) throw new UsageError('--clickhouse-url must be one of --clickhouse-shard-urls');
  return { name, shardUrls };
}

function noClickHouseCredentials(v: Record<string, string | boolean | undefined>): null {
  for (const name of ['clickhouse-user', 'clickhouse-password-file']) {
    if (v[name] !== undefined) throw new UsageError(`--${name} needs --clickhouse-url (without it telemetry goes to the embedded store)`);
  }
  return null;
}

/** Checks the URL (http(s), database name, no password in it) and reads the credentials. */
function clickhouseCredentials(url: string, v: Record<string, string | boolean | undefined>, env: FleetgwConfig): ClickHouseCredentials {
  let urlUser: string | undefined;
  try {
    urlUser = parseClickHouseUrl(url).username;
  } catch (err: unknown) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const userFlag = opt(v, 'clickhouse-user');
  const passwordFile = opt(v, 'clickhouse-password-file');
  return resolveClickHouseCredentials(
    { ...(userFlag !== undefined ? { userFlag } : {}), ...(urlUser !== undefined ? { urlUser } : {}), ...(passwordFile !== undefined ? { passwordFile: resolve(passwordFile) } : {}) },
    env,
    (msg) => process.stderr.write(`fleetgw: warning: ${msg}\n`),
  );
}
