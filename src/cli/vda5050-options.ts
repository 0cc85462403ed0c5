/**
 * `fleetgw serve`'s VDA 5050 flags (docs/vda5050.md, docs/configuration.md), checked once at start
 * with errors naming the flag. The external broker's password comes from a file only (as the
 * ClickHouse password: a command line is readable by every local user).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bindingPartProblem } from '../fleet/robots/vda5050-identity.js';
import {
  DEFAULT_VDA5050_INTERFACE,
  DEFAULT_VDA5050_MQTT_PORT,
  VDA5050_MODES,
  VDA5050_VERSIONS,
  type ExternalBroker,
  type Vda5050Settings,
} from '../vda5050/broker/settings.js';
import { DEFAULT_MAP_ORIGIN, type MapOrigin } from '../vda5050/link/map-frame.js';
import { opt, port } from './args.js';
import { readPasswordFile } from './clickhouse-credentials.js';
import { UsageError } from './usage.js';

type Values = Record<string, string | boolean | undefined>;

/** The flags' entries in serve's parseStrict spec. */
export const VDA5050_OPTION_SPEC = {
  vda5050: { type: 'string' },
  'vda5050-mqtt-port': { type: 'string' },
  'vda5050-mqtt-url': { type: 'string' },
  'vda5050-mqtt-username': { type: 'string' },
  'vda5050-mqtt-password-file': { type: 'string' },
  'vda5050-mqtt-ca': { type: 'string' },
  'vda5050-interface': { type: 'string' },
  'vda5050-version': { type: 'string' },
  'vda5050-map-origin': { type: 'string' },
  'vda5050-go-to-extent': { type: 'string' },
} as const;

const EXTERNAL_ONLY = ['vda5050-mqtt-username', 'vda5050-mqtt-password-file', 'vda5050-mqtt-ca'] as const;

/** Refuses `--vda5050-mqtt-password` before parsing, so its value is never echoed. */
export function refuseVda5050PasswordArgument(argv: readonly string[]): void {
  const flag = '--vda5050-mqtt-password';
  if (argv.some((a) => a === flag || a.startsWith(`${flag}=`))) {
    throw new UsageError(`${flag} is refused: a password on the command line is visible to every local user (ps, /proc). Put it in a file readable only by the gateway's user and pass --vda5050-mqtt-password-file FILE`);
  }
}

/**
 * The VDA 5050 settings from serve's parsed flags.
 * @throws UsageError naming the flag at fault
 */
export function vda5050Settings(v: Values, warn: (msg: string) => void): Vda5050Settings {
  const mode = opt(v, 'vda5050') ?? 'auto';
  if (!(VDA5050_MODES as readonly string[]).includes(mode)) throw new UsageError(`--vda5050 must be one of: ${VDA5050_MODES.join(', ')}, got '${mode}'`);
  const version = opt(v, 'vda5050-version') ?? '2.0.0';
  if (!(VDA5050_VERSIONS as readonly string[]).includes(version)) {
    throw new UsageError(`--vda5050-version must be one of: ${VDA5050_VERSIONS.join(', ')} (the versions the gateway speaks), got '${version}'`);
  }
  const interfaceName = opt(v, 'vda5050-interface') ?? DEFAULT_VDA5050_INTERFACE;
  const problem = bindingPartProblem('--vda5050-interface', interfaceName);
  if (problem !== null) throw new UsageError(problem);
  const url = opt(v, 'vda5050-mqtt-url');
  const given = Object.keys(VDA5050_OPTION_SPEC).filter((k) => k !== 'vda5050' && v[k] !== undefined);
  if (mode === 'off' && given.length > 0) throw new UsageError(`--${given[0]} has no effect with --vda5050 off`);
  if (url === undefined) {
    const stray = EXTERNAL_ONLY.find((k) => v[k] !== undefined);
    if (stray !== undefined) throw new UsageError(`--${stray} needs --vda5050-mqtt-url (without it the gateway runs its own broker)`);
  } else if (v['vda5050-mqtt-port'] !== undefined) {
    throw new UsageError('--vda5050-mqtt-port is the embedded broker\'s port: it has no effect with --vda5050-mqtt-url');
  }
  return {
    mode: mode as Vda5050Settings['mode'],
    port: port(opt(v, 'vda5050-mqtt-port'), 'vda5050-mqtt-port', DEFAULT_VDA5050_MQTT_PORT),
    interfaceName,
    version: version as Vda5050Settings['version'],
    external: url === undefined ? null : externalBroker(url, v, warn),
  };
}

function externalBroker(url: string, v: Values, warn: (msg: string) => void): ExternalBroker {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--vda5050-mqtt-url must be mqtt://HOST:PORT or mqtts://HOST:PORT, got '${url.replace(/\/\/[^@/]*@/, '//…@')}'`);
  }
  if (parsed.protocol !== 'mqtt:' && parsed.protocol !== 'mqtts:') throw new UsageError(`--vda5050-mqtt-url must use mqtt:// or mqtts://, got '${parsed.protocol}'`);
  if (parsed.username !== '' || parsed.password !== '') {
    throw new UsageError('--vda5050-mqtt-url must not carry credentials: use --vda5050-mqtt-username and --vda5050-mqtt-password-file');
  }
  if ((parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search !== '' || parsed.hash !== '') throw new UsageError('--vda5050-mqtt-url must be mqtt(s)://HOST:PORT, without a path or query');
  const username = opt(v, 'vda5050-mqtt-username');
  const passwordFile = opt(v, 'vda5050-mqtt-password-file');
  const caFile = opt(v, 'vda5050-mqtt-ca');
  if (caFile !== undefined && parsed.protocol !== 'mqtts:') throw new UsageError('--vda5050-mqtt-ca needs an mqtts:// --vda5050-mqtt-url');
  let ca: Buffer | undefined;
  if (caFile !== undefined) {
    try {
      ca = readFileSync(resolve(caFile));
    } catch (e) {
      throw new UsageError(`cannot read --vda5050-mqtt-ca ${caFile}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
  }
  const port = parsed.port !== '' ? parsed.port : parsed.protocol === 'mqtts:' ? '8883' : '1883';
  return {
    url: `${parsed.protocol}//${parsed.hostname}:${port}`,
    ...(username !== undefined ? { username } : {}),
    ...(passwordFile !== undefined ? { password: readPasswordFile(resolve(passwordFile), warn, '--vda5050-mqtt-password-file') } : {}),
    ...(ca !== undefined ? { ca } : {}),
  };
}

/** The most metres the go-to area reaches from the map origin: the equirectangular frame is for a site a few kilometres across. */
export const MAX_GO_TO_EXTENT_M = 10_000;

/** The latitudes the map frame takes (the equirectangular approximation degenerates at the poles). */
export const MAX_ORIGIN_LATITUDE = 85;

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/**
 * Where the robots' VDA 5050 map lies on the earth, from `--vda5050-map-origin LAT,LON[,ELEVATION_M]`
 * and `--vda5050-go-to-extent METRES`; undefined when neither is given (the default origin).
 * @throws UsageError naming the flag at fault
 */
export function vda5050MapOrigin(v: Values): MapOrigin | undefined {
  const origin = opt(v, 'vda5050-map-origin');
  const extent = opt(v, 'vda5050-go-to-extent');
  if (origin === undefined && extent === undefined) return undefined;
  const at = origin === undefined ? DEFAULT_MAP_ORIGIN : originOf(origin);
  let halfSizeM = DEFAULT_MAP_ORIGIN.halfSizeM;
  if (extent !== undefined) {
    const m = DECIMAL.test(extent) ? Number(extent) : NaN;
    if (!(m > 0 && m <= MAX_GO_TO_EXTENT_M)) throw new UsageError(`--vda5050-go-to-extent must be a number of metres above 0 and at most ${MAX_GO_TO_EXTENT_M}, got '${extent}'`);
    halfSizeM = m;
  }
  return { latitude: at.latitude, longitude: at.longitude, elevationM: at.elevationM, halfSizeM };
}

function originOf(text: string): Omit<MapOrigin, 'halfSizeM'> {
  const parts = text.split(',').map((p) => p.trim());
  const shape = `--vda5050-map-origin must be LATITUDE,LONGITUDE[,ELEVATION_M] (decimal degrees, metres), got '${text}'`;
  if ((parts.length !== 2 && parts.length !== 3) || !parts.every((p) => DECIMAL.test(p))) throw new UsageError(shape);
  const [latitude, longitude, elevationM] = parts.map(Number) as [number, number, number | undefined];
  if (Math.abs(latitude) > MAX_ORIGIN_LATITUDE) throw new UsageError(`--vda5050-map-origin latitude must be within ±${MAX_ORIGIN_LATITUDE}°, got ${latitude}`);
  if (Math.abs(longitude) > 180) throw new UsageError(`--vda5050-map-origin longitude must be within ±180°, got ${longitude}`);
  if (elevationM !== undefined && Math.abs(elevationM) > 10_000) throw new UsageError(`--vda5050-map-origin elevation must be within ±10000 m, got ${elevationM}`);
  return { latitude, longitude, elevationM: elevationM ?? DEFAULT_MAP_ORIGIN.elevationM };
}
