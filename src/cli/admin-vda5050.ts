/**
 * `fleetgw admin vda5050-acl`: the mosquitto ACL file for the robots with a VDA 5050 identity
 * (docs/vda5050.md, "mosquitto"), to stdout or `--out FILE` (replaced whole, never half-written).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { bindingPartProblem } from '../fleet/robots/vda5050-identity.js';
import type { Store } from '../store/lmdb.js';
import { vda5050Robots } from '../store/vda5050-index.js';
import { mosquittoAcl } from '../vda5050/broker/mosquitto-acl.js';
import { DEFAULT_VDA5050_INTERFACE, VDA5050_VERSIONS } from '../vda5050/broker/settings.js';
import { opt, parseStrict, req } from './args.js';
import { UsageError } from './usage.js';

type Out = (line: string) => void;
type WithStore = <T>(dataDir: string, fn: (store: Store) => T | Promise<T>) => Promise<T>;

/** Runs `admin vda5050-acl`; returns the exit code. */
export async function runAdminVda5050Acl(argv: string[], out: Out, withStore: WithStore): Promise<number> {
  const v = parseStrict(argv, {
    'data-dir': { type: 'string' }, 'master-username': { type: 'string' }, 'vda5050-interface': { type: 'string' },
    'vda5050-version': { type: 'string' }, out: { type: 'string' }, json: { type: 'boolean' },
  });
  const dataDir = req(v, 'data-dir');
  const masterUsername = req(v, 'master-username');
  // One mosquitto config token: no blanks, nothing that would read as a comment or a second line.
  if (!/^[\x21-\x7e]{1,128}$/.test(masterUsername) || masterUsername.startsWith('#')) {
    throw new UsageError('--master-username must be 1-128 printable ASCII characters without spaces, not starting with #');
  }
  const interfaceName = opt(v, 'vda5050-interface') ?? DEFAULT_VDA5050_INTERFACE;
  const problem = bindingPartProblem('--vda5050-interface', interfaceName);
  if (problem !== null) throw new UsageError(problem);
  const version = opt(v, 'vda5050-version') ?? '2.0.0';
  if (!(VDA5050_VERSIONS as readonly string[]).includes(version)) throw new UsageError(`--vda5050-version must be one of: ${VDA5050_VERSIONS.join(', ')}, got '${version}'`);
  const robots = await withStore(dataDir, (store) =>
    vda5050Robots(store).map((r) => ({ robotId: r.robotId, fleetId: r.fleetId, binding: { manufacturer: r.vda5050!.manufacturer, serialNumber: r.vda5050!.serialNumber } })),
  );
  const text = mosquittoAcl({ interfaceName, version, masterUsername, robots });
  const file = opt(v, 'out');
  if (file === undefined) {
    out(text.trimEnd());
    return 0;
  }
  const path = resolve(file);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, path);
  out(v.json === true ? JSON.stringify({ file: path, robots: robots.length }) : `wrote ${path} (${robots.length} robot(s))`);
  return 0;
}
