/**
 * The robots file of `fleetgw sim --robots-file`: a JSON array of `{robotId, robotToken}`, or an
 * object `{robots: [...]}` (what `fleetgw admin` tooling may print). Errors name the entry, never
 * the token.
 */
import { readFileSync } from 'node:fs';

export interface SimRobotCredentials {
  robotId: string;
  robotToken: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Reads and validates a robots file (synchronous: used once at CLI start-up). */
export function loadRobotsFile(path: string): SimRobotCredentials[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read robots file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new Error(`robots file ${path} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return parseRobots(doc, path);
}

/** Validates an already-parsed robots document. */
export function parseRobots(doc: unknown, source = 'robots file'): SimRobotCredentials[] {
  const list = Array.isArray(doc) ? doc : isObject(doc) && Array.isArray(doc.robots) ? doc.robots : null;
  if (list === null) throw new Error(`${source}: expected a JSON array of {robotId, robotToken} or {"robots": [...]}`);
  if (list.length === 0) throw new Error(`${source}: lists no robots`);
  const seen = new Set<string>();
  return list.map((entry: unknown, i: number) => {
    if (!isObject(entry)) throw new Error(`${source}: entry ${i} is not an object`);
    const { robotId, robotToken } = entry;
    if (typeof robotId !== 'string' || !UUID.test(robotId)) throw new Error(`${source}: entry ${i} needs robotId, a lowercase UUID`);
    if (typeof robotToken !== 'string' || robotToken.length === 0) throw new Error(`${source}: entry ${i} (robot ${robotId}) needs a non-empty robotToken string`);
    if (seen.has(robotId)) throw new Error(`${source}: robot ${robotId} is listed twice`);
    seen.add(robotId);
    return { robotId, robotToken };
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
