/**
 * What `startGateway` takes: the production settings `fleetgw serve` passes, and the replacements a
 * test or an embedder may make.
 */
import type { DecoderSetting } from '../telemetry/decode/index.js';
import type { Logger } from 'pino';
import type { CommandServiceOptions } from '../commands/service-types.js';
import type { GatewayTunables } from '../config.js';
import type { LogBytesSink } from '../http/access-log.js';
import type { RequestObserver } from '../http/request-done.js';
import type { Clock } from '../missions/clock.js';
import type { Store } from '../store/lmdb.js';
import type { MapOrigin } from '../vda5050/link/map-frame.js';
import type { Vda5050Settings } from '../vda5050/broker/settings.js';

export interface GatewayOptions {
  dataDir: string;
  host: string;
  httpPort: number;
  grpcPort: number;
  /** null: embedded chdb store. */
  clickhouseUrl: string | null;
  /** With `clickhouseUrl`: write to this cluster's shards (docs/scale-out.md). */
  clickhouseCluster?: { name: string; shardUrls: string[] };
  /** Bound of the telemetry disk spool (`<dataDir>/telemetry-spool`). Default 1 GiB. */
  telemetrySpoolMaxBytes?: number;
  /** ClickHouse user/password (from a file or the environment, never the command line). */
  clickhouseAuth?: { username?: string; password?: string };
  /** 'self-signed': make/reuse `<dataDir>/tls`; 'insecure': plain HTTP (loopback only, checked by the CLI). */
  tls: 'self-signed' | 'insecure' | { certFile: string; keyFile: string };
  /** Defaults: DEFAULT_TUNABLES (src/config.ts), field by field. */
  tunables?: Partial<GatewayTunables>;
  /** The process logger; each component logs on a child with `component` bound. Default: none. */
  log?: Logger;
  /**
   * The process logger's byte sink (`ProcessLogger.writeBytes`), for the access log's lines written as
   * bytes. Without it the access log goes through `log` (pino), the same line at a higher cost.
   */
  logBytes?: LogBytesSink;
  /**
   * Further observers of finished HTTP requests (request metrics), after the access log; see
   * src/http/request-done.ts.
   */
  onRequestDone?: readonly RequestObserver[];
  /**
   * File holding the bearer token of `GET /metrics` (docs/operations.md). Default
   * `<dataDir>/metrics-token`, created with a random token when missing.
   */
  metricsTokenFile?: string;
  /**
   * The telemetry core's process-wide settings (src/config.ts): the decoder (`js` and `reference` leave
   * the C++ addon unloaded), huge pages for its large buffers, the insert encoding for one ClickHouse
   * server. Each unset one keeps its default (`native`, `on`, `auto`).
   */
  telemetry?: { decoder?: DecoderSetting; hugePages?: 'on' | 'off'; clickhouseInsertFormat?: 'auto' | 'native' | 'rowbinary' };
  /** Browser origins allowed to call the API (FLEETGW_CORS_ORIGINS; src/http/cors.ts). Default: none, CORS off. */
  corsOrigins?: readonly string[];
  /**
   * A planned stop (close()) tells every connected robot to hold its link-loss reaction this long
   * while the gateway restarts (docs/robot-link.md, "Planned gateway restarts"). Default 0: no notice.
   */
  restartHoldMs?: number;
  /** Where VDA 5050 robots' map frame lies on the earth (docs/vda5050.md); default: the simulator's depot. */
  vda5050MapOrigin?: MapOrigin;
  /** The VDA 5050 broker side (docs/vda5050.md). Default: auto mode, embedded broker on port 1883, `uagv`, 2.0.0. */
  vda5050?: Vda5050Settings;
  /** Replacements for tests and embedders; `fleetgw serve` passes none. */
  overrides?: GatewayOverrides;
}

/** What a test (or an embedder) may replace in the gateway it starts; everything else is production wiring. */
export interface GatewayOverrides {
  /**
   * Serve this store instead of opening `<dataDir>/lmdb`. The caller keeps it: close() leaves it open,
   * so one store can outlive several gateway starts (a restart test).
   */
  store?: Store;
  /** Time source of the mission runtime (scheduler, dispatcher, run tracker). Default: the system clock. */
  clock?: Clock;
  /** Command service settings (ack retry schedule, outbox and audit bounds, wait limits). */
  commands?: Omit<CommandServiceOptions, 'store' | 'link'>;
  /** How often the mission dispatcher re-checks waiting fires (default 500 ms). */
  missionPassIntervalMs?: number;
}
