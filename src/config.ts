/**
 * The gateway's environment: every variable `fleetgw serve` and `fleetgw sim` honour, parsed and
 * checked once at start by {@link parseConfig} (docs/configuration.md lists them). The CLI hands the
 * parts down to the modules that use them; nothing else in src/ reads `process.env`.
 *
 * Tunables are settings outside the CLI contract, with their defaults, that operators and benchmarks
 * can adjust without a new flag.
 */

export interface GatewayTunables {
  /** Sustained requests per second allowed per API key. */
  rateLimitPerSecond: number;
  /** Burst size of the per-key token bucket. */
  rateLimitBurst: number;
  /** Largest accepted request body. */
  maxBodyBytes: number;
  /** gRPC keepalive ping interval towards robots. */
  robotKeepaliveMs: number;
  /** How long a keepalive ping may go unanswered before the robot is offline. */
  robotKeepaliveTimeoutMs: number;
  /** A robot's link conflict clears after this long without a refused connection (docs/robot-link.md). */
  linkConflictClearMs: number;
  /** A user session ends this long after its last request (docs/sessions.md). */
  sessionIdleTimeoutS: number;
  /** A user session ends this long after login, whatever the activity. */
  sessionMaxAgeS: number;
  /**
   * Telemetry bytes held in memory (batching, decoding, blocks waiting for the spool or an insert) at
   * which robot telemetry reads pause; they resume under a quarter of it (telemetry/README.md).
   */
  telemetryHighWaterBytes: number;
  /**
   * Telemetry rows wait at most this long before their store insert (telemetry/README.md, "Write path
   * and its bounds"): at light load each insert is one part the store must write and merge, so a
   * longer wait costs the embedded store less CPU, and stored rows (history queries) and the robots'
   * receipts lag by up to it. At most 30 s (see `MAX` below).
   */
  telemetryInsertMaxAgeMs: number;
  /**
   * An insert block with fewer rows than this at the insert age waits for more, up to
   * `telemetryInsertSmallMaxAgeMs`: a part's merge cost grows far slower than its rows (10x the rows,
   * 2.3x the merge CPU on chdb), so a small depot writes fewer, larger parts (and its receipts and history lag up to that
   * age); a busy one (above ~20,000 samples a second) keeps the insert age. 1 turns it off.
   */
  telemetryInsertMinRows: number;
  /** How long a block under `telemetryInsertMinRows` may wait; never less than the insert age. At most 30 s. */
  telemetryInsertSmallMaxAgeMs: number;
  /** How long a field rule change waits for every online robot to apply it before answering 207 (docs/field-rules.md). */
  fieldRuleAckTimeoutMs: number;
  /** A robot-detected object not seen again for this long is removed (docs/objects.md). */
  objectTtlMs: number;
  /** An active robot offline this long raises a `robot_offline` alert (docs/alerts.md). */
  alertOfflineAfterS: number;
  /** A battery reading below this percentage raises a `battery_low` alert. */
  alertBatteryLowPct: number;
  /** A `battery_low` alert resolves once the battery reads at least this percentage (never below the low threshold). */
  alertBatteryClearPct: number;
  /** Open live-stream sockets, gateway-wide (docs/telemetry-stream.md, bounds on open streams). */
  streamMaxSockets: number;
  /** Open live-stream sockets per API key. */
  streamMaxSocketsPerKey: number;
  /** Open live-stream sockets per organization. */
  streamMaxSocketsPerOrg: number;
  /** MCP sessions, gateway-wide (docs/mcp.md, "Sessions"). */
  mcpMaxSessions: number;
  /** MCP sessions per organization. */
  mcpMaxSessionsPerOrg: number;
  /** MCP sessions per credential (API key or user session). */
  mcpMaxSessionsPerKey: number;
  /** An MCP session without a request other than ping this long is idle: closed first when another needs room. */
  mcpSessionIdleS: number;
  /** An MCP session without a request other than ping this long is closed. */
  mcpSessionTimeoutS: number;
  /**
   * V8's old-generation headroom after a full GC, in percent of the live heap, while telemetry runs at
   * peak rates (src/gateway/heap-growth.ts, docs/operations.md): larger means fewer full GCs and more
   * memory.
   */
  heapGrowingPercent: number;
  /** The same headroom at low telemetry rates, where memory matters more than full-GC CPU. */
  heapGrowingPercentLowLoad: number;
  /** Bytes of messages one MCAP history export writes before it ends early (docs/telemetry-history.md, Limits). */
  historyExportMaxBytes: number;
  /** MCAP history exports running at once, gateway-wide; more are answered 503 with Retry-After. */
  historyExports: number;
  /** Connections the embedded VDA 5050 broker holds at once; more are dropped (docs/vda5050.md, "Limits"). */
  vda5050MaxConnections: number;
  /** Largest MQTT packet the embedded VDA 5050 broker accepts; a larger one closes the connection. */
  vda5050MaxPacketBytes: number;
}

export const DEFAULT_TUNABLES: GatewayTunables = {
  rateLimitPerSecond: 100,
  rateLimitBurst: 200,
  maxBodyBytes: 1024 * 1024,
  robotKeepaliveMs: 2000,
  robotKeepaliveTimeoutMs: 2000,
  linkConflictClearMs: 60_000,
  sessionIdleTimeoutS: 30 * 60,
  sessionMaxAgeS: 12 * 60 * 60,
  telemetryHighWaterBytes: 256 * 1024 * 1024,
  telemetryInsertMaxAgeMs: 1_000,
  telemetryInsertMinRows: 20_000,
  telemetryInsertSmallMaxAgeMs: 5_000,
  fieldRuleAckTimeoutMs: 5000,
  objectTtlMs: 60_000,
  alertOfflineAfterS: 300,
  alertBatteryLowPct: 15,
  alertBatteryClearPct: 20,
  streamMaxSockets: 1_000,
  streamMaxSocketsPerKey: 50,
  streamMaxSocketsPerOrg: 200,
  mcpMaxSessions: 512,
  mcpMaxSessionsPerOrg: 64,
  mcpMaxSessionsPerKey: 16,
  mcpSessionIdleS: 120,
  mcpSessionTimeoutS: 600,
  heapGrowingPercent: 100,
  heapGrowingPercentLowLoad: 50,
  historyExportMaxBytes: 48 * 1024 * 1024,
  historyExports: 4,
  vda5050MaxConnections: 2_000,
  vda5050MaxPacketBytes: 1024 * 1024,
};

const ENV: Record<keyof GatewayTunables, string> = {
  rateLimitPerSecond: 'FLEETGW_RATE_LIMIT_RPS',
  rateLimitBurst: 'FLEETGW_RATE_LIMIT_BURST',
  maxBodyBytes: 'FLEETGW_MAX_BODY_BYTES',
  robotKeepaliveMs: 'FLEETGW_ROBOT_KEEPALIVE_MS',
  robotKeepaliveTimeoutMs: 'FLEETGW_ROBOT_KEEPALIVE_TIMEOUT_MS',
  linkConflictClearMs: 'FLEETGW_LINK_CONFLICT_CLEAR_MS',
  sessionIdleTimeoutS: 'FLEETGW_SESSION_IDLE_TIMEOUT_S',
  sessionMaxAgeS: 'FLEETGW_SESSION_MAX_AGE_S',
  telemetryHighWaterBytes: 'FLEETGW_TELEMETRY_HIGH_WATER_BYTES',
  telemetryInsertMaxAgeMs: 'FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS',
  telemetryInsertMinRows: 'FLEETGW_TELEMETRY_INSERT_MIN_ROWS',
  telemetryInsertSmallMaxAgeMs: 'FLEETGW_TELEMETRY_INSERT_SMALL_MAX_AGE_MS',
  fieldRuleAckTimeoutMs: 'FLEETGW_FIELD_RULE_ACK_TIMEOUT_MS',
  objectTtlMs: 'FLEETGW_OBJECT_TTL_MS',
  alertOfflineAfterS: 'FLEETGW_ALERT_OFFLINE_AFTER_S',
  alertBatteryLowPct: 'FLEETGW_ALERT_BATTERY_LOW_PCT',
  alertBatteryClearPct: 'FLEETGW_ALERT_BATTERY_CLEAR_PCT',
  streamMaxSockets: 'FLEETGW_STREAM_MAX_SOCKETS',
  streamMaxSocketsPerKey: 'FLEETGW_STREAM_MAX_SOCKETS_PER_KEY',
  streamMaxSocketsPerOrg: 'FLEETGW_STREAM_MAX_SOCKETS_PER_ORG',
  mcpMaxSessions: 'FLEETGW_MCP_MAX_SESSIONS',
  mcpMaxSessionsPerOrg: 'FLEETGW_MCP_MAX_SESSIONS_PER_ORG',
  mcpMaxSessionsPerKey: 'FLEETGW_MCP_MAX_SESSIONS_PER_KEY',
  mcpSessionIdleS: 'FLEETGW_MCP_SESSION_IDLE_S',
  mcpSessionTimeoutS: 'FLEETGW_MCP_SESSION_TIMEOUT_S',
  heapGrowingPercent: 'FLEETGW_HEAP_GROWING_PERCENT',
  heapGrowingPercentLowLoad: 'FLEETGW_HEAP_GROWING_PERCENT_LOW_LOAD',
  historyExportMaxBytes: 'FLEETGW_HISTORY_EXPORT_MAX_BYTES',
  historyExports: 'FLEETGW_HISTORY_EXPORTS',
  vda5050MaxConnections: 'FLEETGW_VDA5050_MAX_CONNECTIONS',
  vda5050MaxPacketBytes: 'FLEETGW_VDA5050_MAX_PACKET_BYTES',
};

/**
 * Largest accepted values, where a larger one breaks something. The insert ages: robots' receipts wait
 * for it (a block is spooled when it is cut), and an agent keeps at most 4,096 unacknowledged batches
 * (src/agent/agent.ts): at 100 batches a second that is about 41 s, so a longer age would make agents
 * drop batches before they are durable. 30 s leaves room; it is also far below setTimeout's 2^31-1 ms.
 */
const MAX: Partial<Record<keyof GatewayTunables, number>> = {
  telemetryInsertMaxAgeMs: 30_000,
  telemetryInsertSmallMaxAgeMs: 30_000,
  // A bound on what a misconfiguration can hold back: 5x the default, and past 10,000-row parts the
  // merge cost per part grows slowly (1.7x for 10x the rows at 1,000 -> 10,000, bench/notes/telemetry-ingest.md, "Fewer parts for the embedded store").
  telemetryInsertMinRows: 100_000,
  // Each export holds about 1.5 MiB (a read chunk, an MCAP chunk, the socket's backlog).
  historyExports: 64,
  // The MQTT protocol's own bound.
  vda5050MaxPacketBytes: 268_435_455,
};

/**
 * Smallest accepted values, where a smaller one breaks something. An export's byte cap must hold a
 * few samples with every string at its bound (about 6 KiB each), so that each file of a continued
 * export moves on by more than a timestamp's first sample.
 */
const MIN: Partial<Record<keyof GatewayTunables, number>> = {
  historyExportMaxBytes: 64 * 1024,
  // A VDA 5050 connection message with its header is a few hundred bytes.
  vda5050MaxPacketBytes: 4096,
};

/**
 * Reads tunables from the environment over the defaults.
 * @throws Error naming the variable when a value is not a positive integer, or outside its bounds
 */
export function tunablesFromEnv(env: Env = process.env): GatewayTunables {
  const out = { ...DEFAULT_TUNABLES };
  for (const [field, name] of Object.entries(ENV) as [keyof GatewayTunables, string][]) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got '${raw}'`);
    const max = MAX[field];
    if (max !== undefined && n > max) throw new Error(`${name} must be at most ${max}, got '${raw}'`);
    const min = MIN[field];
    if (min !== undefined && n < min) throw new Error(`${name} must be at least ${min}, got '${raw}'`);
    out[field] = n;
  }
  return out;
}

/** An environment as `process.env` holds it. */
export type Env = Readonly<Record<string, string | undefined>>;

export const LOG_FORMATS = ['json', 'pretty'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export const TELEMETRY_DECODERS = ['native', 'js', 'reference'] as const;
export const INSERT_FORMATS = ['auto', 'native', 'rowbinary'] as const;
export const HUGE_PAGES = ['on', 'off'] as const;
export const TEST_FAULT_KINDS = ['kill', 'throw'] as const;

/** What the robot link accepts after `Bearer ` (src/robotlink/auth.ts): 1-512 printable ASCII characters, no spaces. */
export const ROBOT_TOKEN_PATTERN = /^[\x21-\x7e]{1,512}$/;

/** The variables besides the tunables, in the order docs/configuration.md lists them. */
const OTHER_VARIABLES = [
  'FLEETGW_LOG_FORMAT',
  'FLEETGW_LOG_LEVEL',
  'FLEETGW_CORS_ORIGINS',
  'FLEETGW_CLICKHOUSE_USER',
  'FLEETGW_CLICKHOUSE_PASSWORD',
  'FLEETGW_CLICKHOUSE_INSERT_FORMAT',
  'FLEETGW_TELEMETRY_DECODER',
  'FLEETGW_HUGE_PAGES',
  'FLEETGW_ROBOT_TOKEN',
  'FLEETGW_BENCH_STOP_TRACE',
  'FLEETGW_TEST_FAULT',
] as const;

/** Every environment variable the gateway and the simulator honour (docs/configuration.md has one row for each). */
export const ENVIRONMENT_VARIABLES: readonly string[] = Object.freeze([...Object.values(ENV), ...OTHER_VARIABLES]);

/** The parsed environment (see {@link parseConfig}); frozen. */
export interface FleetgwConfig {
  readonly tunables: Readonly<GatewayTunables>;
  /** FLEETGW_LOG_FORMAT / FLEETGW_LOG_LEVEL: used when the flag is not given. */
  readonly logFormat: (typeof LOG_FORMATS)[number] | undefined;
  readonly logLevel: (typeof LOG_LEVELS)[number] | undefined;
  /** FLEETGW_CORS_ORIGINS: exact browser origins (`scheme://host[:port]`) that may call the API; empty: CORS off. */
  readonly corsOrigins: readonly string[];
  /** FLEETGW_CLICKHOUSE_USER / FLEETGW_CLICKHOUSE_PASSWORD (src/cli/clickhouse-credentials.ts decides which source wins). */
  readonly clickhouseUser: string | undefined;
  readonly clickhousePassword: string | undefined;
  /** FLEETGW_CLICKHOUSE_INSERT_FORMAT (src/telemetry/store/native-insert.ts). */
  readonly clickhouseInsertFormat: (typeof INSERT_FORMATS)[number];
  /** FLEETGW_TELEMETRY_DECODER: `native` uses the C++ addon when it loads; `js` and `reference` run without the addon. */
  readonly telemetryDecoder: (typeof TELEMETRY_DECODERS)[number];
  /** FLEETGW_HUGE_PAGES (src/telemetry/store/large-buffer.ts). */
  readonly hugePages: (typeof HUGE_PAGES)[number];
  /** FLEETGW_ROBOT_TOKEN: `fleetgw sim --robot-id`'s token when no token flag is given. */
  readonly robotToken: string | undefined;
  /** FLEETGW_BENCH_STOP_TRACE: the file a benchmark reads stop-request stages from (src/api/stop-trace.ts). */
  readonly benchStopTrace: string | undefined;
  /** FLEETGW_TEST_FAULT: test-only fault injection (src/missions/fault-points.ts). */
  readonly testFault: { readonly point: string; readonly kind: (typeof TEST_FAULT_KINDS)[number] } | undefined;
}

/**
 * Parses and checks every variable of {@link ENVIRONMENT_VARIABLES} once; an empty value is the same
 * as an unset one. The CLI turns the error into a usage error (exit 2).
 * @throws Error naming the variable and the values it accepts; a secret's value is never quoted
 */
export function parseConfig(env: Env): FleetgwConfig {
  const get = (name: (typeof OTHER_VARIABLES)[number]): string | undefined => {
    const v = env[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const robotToken = get('FLEETGW_ROBOT_TOKEN')?.trim();
  // The token itself is never quoted: error lines reach logs and terminals.
  if (robotToken !== undefined && !ROBOT_TOKEN_PATTERN.test(robotToken)) {
    throw new Error('FLEETGW_ROBOT_TOKEN must hold one robot token (1-512 printable ASCII characters, no spaces)');
  }
  return Object.freeze({
    tunables: Object.freeze(tunablesFromEnv(env)),
    logFormat: oneOf('FLEETGW_LOG_FORMAT', get('FLEETGW_LOG_FORMAT'), LOG_FORMATS),
    logLevel: oneOf('FLEETGW_LOG_LEVEL', get('FLEETGW_LOG_LEVEL'), LOG_LEVELS),
    corsOrigins: Object.freeze(parseCorsOrigins(get('FLEETGW_CORS_ORIGINS'))),
    clickhouseUser: get('FLEETGW_CLICKHOUSE_USER'),
    clickhousePassword: get('FLEETGW_CLICKHOUSE_PASSWORD'),
    clickhouseInsertFormat: oneOf('FLEETGW_CLICKHOUSE_INSERT_FORMAT', get('FLEETGW_CLICKHOUSE_INSERT_FORMAT'), INSERT_FORMATS) ?? 'auto',
    telemetryDecoder: oneOf('FLEETGW_TELEMETRY_DECODER', get('FLEETGW_TELEMETRY_DECODER'), TELEMETRY_DECODERS) ?? 'native',
    hugePages: oneOf('FLEETGW_HUGE_PAGES', get('FLEETGW_HUGE_PAGES'), HUGE_PAGES) ?? 'on',
    robotToken,
    benchStopTrace: get('FLEETGW_BENCH_STOP_TRACE'),
    testFault: testFault(get('FLEETGW_TEST_FAULT')),
  });
}

function oneOf<T extends string>(name: string, raw: string | undefined, values: readonly T[]): T | undefined {
  if (raw === undefined) return undefined;
  if (!(values as readonly string[]).includes(raw)) throw new Error(`${name} must be one of: ${values.join(', ')}, got '${raw}'`);
  return raw as T;
}

/** `<point>:<kind>`; the point names are the test's business (fault-points.ts), the kind is checked here. */
function testFault(raw: string | undefined): FleetgwConfig['testFault'] {
  if (raw === undefined) return undefined;
  const sep = raw.lastIndexOf(':');
  const kind = raw.slice(sep + 1);
  if (sep <= 0 || !(TEST_FAULT_KINDS as readonly string[]).includes(kind)) {
    throw new Error(`FLEETGW_TEST_FAULT must be <point>:<${TEST_FAULT_KINDS.join('|')}>, got '${raw}'`);
  }
  return Object.freeze({ point: raw.slice(0, sep), kind: kind as (typeof TEST_FAULT_KINDS)[number] });
}

/**
 * FLEETGW_CORS_ORIGINS: comma-separated exact origins (`https://ops.example.com:8443`); no wildcard,
 * no path. Blank entries are skipped.
 * @throws Error naming the variable and the entry at fault
 */
export function parseCorsOrigins(raw: string | undefined, name = 'FLEETGW_CORS_ORIGINS'): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const out: string[] = [];
  for (const entry of raw.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`${name}: '${entry}' is not an origin (expected scheme://host[:port])`);
    }
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== entry.replace(/\/$/, '')) {
      throw new Error(`${name}: '${entry}' is not an origin (expected scheme://host[:port], no path, no wildcard)`);
    }
    out.push(url.origin);
  }
  return out;
}
