/**
 * The robots file of `fleetgw sim --vda5050`: the gRPC simulator's file (src/sim/robots-file.ts)
 * where each entry also names the robot's VDA 5050 identity, `"vda5050": "MANUFACTURER/SERIAL"` (the value
 * `fleetgw admin add-robot --vda5050` binds) or `{manufacturer, serialNumber}` (what `add-robot --json`
 * prints). Errors name the entry or the line, never the token.
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

/**
 * Reads and validates a VDA 5050 robots file (synchronous: used once at CLI start-up): a JSON document,
 * or JSON lines, one robot per line (what `fleetgw admin add-robot --vda5050 … --json >> FILE` appends).
 */
export function loadVdaRobotsFile(path: string): VdaSimRobotCredentials[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read robots file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseVdaRobots(parseDocument(text, path), path);
}

function parseDocument(text: string, path: string): unknown {
  // Parser messages quote the text around the fault, which may be a token: they are not passed on.
  try {
    return JSON.parse(text);
  } catch {
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    if (lines.length < 2) throw new Error(`robots file ${path} is not valid JSON`);
    return lines.map((line, i) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        throw new Error(`robots file ${path}: line ${i + 1} is not valid JSON`);
      }
    });
  }
}

/** Validates an already-parsed VDA 5050 robots document (an array, `{robots: [...]}` or one robot object). */
export function parseVdaRobots(parsed: unknown, source = 'robots file'): VdaSimRobotCredentials[] {
  const doc = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'robotId' in parsed ? [parsed] : parsed;
  const creds = parseRobots(doc, source);
  const list = (Array.isArray(doc) ? doc : (doc as { robots: unknown[] }).robots) as Array<Record<string, unknown>>;
  const seen = new Set<string>();
  return creds.map((c, i) => {
    const { manufacturer, serialNumber } = identityOf(list[i]?.vda5050);
    if (!MANUFACTURER.test(manufacturer) || !SERIAL.test(serialNumber)) {
      throw new Error(`${source}: entry ${i} (robot ${c.robotId}) needs vda5050, "MANUFACTURER/SERIAL" or {manufacturer, serialNumber} (serial: A-Z a-z 0-9 _ . : -)`);
    }
    const key = `${manufacturer}/${serialNumber}`;
    if (seen.has(key)) throw new Error(`${source}: VDA 5050 identity ${key} is listed twice`);
    seen.add(key);
    return { ...c, manufacturer, serialNumber };
  });
}

/** The identity of a `vda5050` value: `"MANUFACTURER/SERIAL"` or what `admin add-robot --json` prints, `{manufacturer, serialNumber}`. */
function identityOf(value: unknown): { manufacturer: string; serialNumber: string } {
  if (typeof value === 'string') {
    const slash = value.lastIndexOf('/');
    return slash < 0 ? { manufacturer: '', serialNumber: '' } : { manufacturer: value.slice(0, slash), serialNumber: value.slice(slash + 1) };
  }
  if (typeof value === 'object' && value !== null) {
    const { manufacturer, serialNumber } = value as Record<string, unknown>;
    if (typeof manufacturer === 'string' && typeof serialNumber === 'string') return { manufacturer, serialNumber };
  }
  return { manufacturer: '', serialNumber: '' };
}
