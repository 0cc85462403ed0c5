// The large-body flood load of bench/command-latency.mjs (`--flood BYTES`): a second API key posts JSON
// bodies of BYTES bytes (`[1,1,…]`: valid JSON no route accepts, and as slow to parse as any) over
// --flood-connections keep-alive connections at --flood-rps requests a second in all, to the paths
// --flood-paths names in turn. It runs in its own process (`--role flood`) so that its CPU is not
// taken from the client measuring the stops.
import http from 'node:http';

const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

/** The option defaults the flood adds to command-latency.mjs (0 bytes: no flood). */
export const FLOOD_DEFAULTS = { flood: 0, 'flood-connections': 20, 'flood-rps': 70, 'flood-paths': 'control-robot,features' };

/** `control-robot` and `features` as request paths of the bench's org and fleet. */
export function floodPaths(names, orgId, fleetId) {
  const known = { 'control-robot': '/v1/agent/control-robot', features: `/v1/orgs/${orgId}/fleets/${fleetId}/features` };
  return names.split(',').map((n) => {
    if (!(n in known)) throw new Error(`--flood-paths: unknown ${n}; known: ${Object.keys(known).join(', ')}`);
    return known[n];
  });
}

/** Arguments of the `--role flood` child. */
export function floodRoleArgs(opts, http_, key, paths) {
  return ['--role', 'flood', '--url', http_, '--key', key, '--paths', paths.join(','), '--bytes', String(opts.flood),
    '--connections', String(opts['flood-connections']), '--rps', String(opts['flood-rps'])];
}

/**
 * The child: floods until SIGTERM, says `flooding` once 20 answers are in, and `done` with the answers
 * by status when stopped.
 */
export async function floodRole(opts) {
  const url = new URL(opts.url);
  const paths = opts.paths.split(',');
  const n = Number(opts.bytes);
  const body = Buffer.from(`[${'1,'.repeat(Math.max(0, Math.floor((n - 3) / 2)))}1]`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number(opts.connections) });
  const statuses = {};
  let answered = 0;
  let running = true;
  let sent = 0;
  const started = performance.now();
  const one = (path) => new Promise((resolve) => {
    const req = http.request({
      host: url.hostname, port: url.port, path, method: 'POST', agent,
      headers: { authorization: `Bearer ${opts.key}`, 'content-type': 'application/json', 'content-length': body.length },
    }, (res) => {
      res.resume();
      res.on('end', () => {
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (++answered === 20) emit({ event: 'flooding' });
        resolve();
      });
    });
    // A 413 closes the connection while the body is being sent: the next request reconnects.
    req.on('error', () => { statuses.error = (statuses.error ?? 0) + 1; resolve(); });
    req.end(body);
  });
  const worker = async () => {
    while (running) {
      const k = sent++;
      const ahead = started + (k * 1000) / Number(opts.rps) - performance.now();
      if (ahead > 0) await new Promise((r) => setTimeout(r, ahead));
      if (running) await one(paths[k % paths.length]);
    }
  };
  const workers = Array.from({ length: Number(opts.connections) }, worker);
  await new Promise((done) => process.once('SIGTERM', done));
  const seconds = (performance.now() - started) / 1000;
  running = false;
  await Promise.all(workers);
  agent.destroy();
  emit({ event: 'done', bodyBytes: body.length, seconds: Number(seconds.toFixed(1)), answeredPerSecond: Number((answered / seconds).toFixed(1)), statuses });
  process.exit(0);
}
