/**
 * The robots file of `fleetgw sim --vda5050`: the same file as the gRPC simulator's (src/sim/robots-file.ts)
 * where each entry also names the robot's VDA 5050 identity, `"vda5050": "MANUFACTURER/SERIAL"` (the value
 * `fleetgw admin add-robot --vda5050` binds). Errors name the entry, never the token.
 */
import { readFileSync } from 'node:fs';
import { parseRobots, type SimRobotCredentials } from '../robots-file.js';

/** A simulated VDA 5050 robot: the gateway's robot and the identity its topics carry. */
export interface VdaSimRobotCredentials extends SimRobotCredentials {
  manufacturer: string;
  serialNumber: string;
}

// A topic level: printable ASCII without the topic separators `/ + #`; the serial number's characters
// are the ones VDA 5050 allows.
const MANUFACTURER = /^[ !"$-*,-.0-~]{1,128}$/;
const SERIAL = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Reads and validates a VDA 5050 robots file (synchronous: used once at CLI start-up). */
export function loadVdaRobotsFile(path: string): VdaSimRobotCredentials[] {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(code !== undefined ? `cannot read robots file ${path}: ${code}` : `robots file ${path} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseVdaRobots(doc, path);
}

/** Validates an already-parsed VDA 5050 robots document. */
export function parseVdaRobots(doc: unknown, source = 'robots file'): VdaSimRobotCredentials[] {
  const creds = parseRobots(doc, source);
  const list = (Array.isArray(doc) ? doc : (doc as { robots: unknown[] }).robots) as Array<Record<string, unknown>>;
  const seen = new Set<string>();
  return creds.map((c, i) => {
    const value = list[i]?.vda5050;
    const slash = typeof value === 'string' ? value.lastIndexOf('/') : -1;
    const manufacturer = typeof value === 'string' ? value.slice(0, slash) : '';
    const serialNumber = typeof value === 'string' ? value.slice(slash + 1) : '';
    if (slash < 0 || !MANUFACTURER.test(manufacturer) || !SERIAL.test(serialNumber)) {
      throw new Error(`${source}: entry ${i} (robot ${c.robotId}) needs vda5050, "MANUFACTURER/SERIAL" (serial: A-Z a-z 0-9 _ . : -)`);
    }
    const key = `${manufacturer}/${serialNumber}`;
    if (seen.has(key)) throw new Error(`${source}: VDA 5050 identity ${key} is listed twice`);
    seen.add(key);
    return { ...c, manufacturer, serialNumber };
  });
}
