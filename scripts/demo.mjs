// `npm run demo`: a gateway on the embedded telemetry store plus a fleet of simulated robots.
// Prints the dashboard's URL and a login (a demo user with a random password), an API key and a curl
// line that works as printed; Ctrl-C stops everything. Data lives in ./.demo-data (git-ignored, the
// state file mode 0600) so a second run reuses the same fleet, key and login. A password on a
// terminal and in a local file is fine for a local demo only (docs/dashboard.md).
// Options are environment variables (README, "The demo"); `npm run demo -- --help` lists them.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dataDir = join(root, '.demo-data');
const bin = join(root, 'bin', 'fleetgw.js');
const stateFile = join(dataDir, 'demo.json');
const OPTIONS = `npm run demo: a gateway and simulated robots, data in ${dataDir} (reused by later runs; delete it to start over)
environment:
  DEMO_PORT    the gateway's HTTPS port (default 8443; 0 picks a free one)
  DEMO_ROBOTS  how many simulated robots the first run registers (default 5)
  DEMO_VDA5050 how many virtual VDA 5050 AGVs (vda-5050-lib, over the embedded MQTT broker) to register and run (default 0)
  DEMO_MQTT_PORT  the embedded MQTT broker's port when DEMO_VDA5050 is set (default: a free one)`;
if (process.argv.includes('--help') || process.argv.includes('-h')) {
  console.log(OPTIONS);
  process.exit(0);
}
const PORT = process.env.DEMO_PORT ?? '8443';
const ROBOTS = Number(process.env.DEMO_ROBOTS ?? 5);
const VDA_ROBOTS = Number(process.env.DEMO_VDA5050 ?? 0);
if (!/^\d+$/.test(PORT) || Number(PORT) > 65535) {
  console.error(`demo: DEMO_PORT must be a port number 0-65535, got '${PORT}'`);
  process.exit(2);
}
if (!Number.isInteger(ROBOTS) || ROBOTS < 1 || ROBOTS > 1000) {
  console.error(`demo: DEMO_ROBOTS must be a whole number from 1 to 1000, got '${process.env.DEMO_ROBOTS}'`);
  process.exit(2);
}
if (!Number.isInteger(VDA_ROBOTS) || VDA_ROBOTS < 0 || VDA_ROBOTS > 100) {
  console.error(`demo: DEMO_VDA5050 must be a whole number from 0 to 100, got '${process.env.DEMO_VDA5050}'`);
  process.exit(2);
}
const MQTT_PORT_SET = process.env.DEMO_MQTT_PORT;
if (MQTT_PORT_SET !== undefined && (!/^\d+$/.test(MQTT_PORT_SET) || Number(MQTT_PORT_SET) < 1 || Number(MQTT_PORT_SET) > 65535)) {
  console.error(`demo: DEMO_MQTT_PORT must be a port number 1-65535, got '${MQTT_PORT_SET}'`);
  process.exit(2);
}

/** A loopback port that was free a moment ago. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function admin(args) {
  const r = spawnSync(process.execPath, [bin, 'admin', ...args, '--json'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`fleetgw admin ${args[0]} failed: ${r.stderr.trim()}`);
  return JSON.parse(r.stdout);
}

let state;
if (existsSync(stateFile)) {
  state = JSON.parse(readFileSync(stateFile, 'utf8'));
} else {
  const init = admin(['init', '--data-dir', dataDir, '--org', 'Demo Depot', '--fleet', 'Yard robots']);
  const robots = [];
  for (let i = 1; i <= ROBOTS; i++) {
    const r = admin(['add-robot', '--data-dir', dataDir, '--fleet', init.fleetId, '--name', `rover-${i}`, '--capabilities', 'drive,stop']);
    robots.push({ robotId: r.robotId, robotToken: r.robotToken });
  }
  state = { ...init, robots };
  writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
  writeFileSync(join(dataDir, 'robots.json'), JSON.stringify(robots), { mode: 0o600 });
}
// The dashboard's login (also added to demo data made before the dashboard existed). The password goes
// to create-user on stdin, never as an argument (arguments show in `ps`).
if (state.login === undefined) {
  const login = { email: 'demo@fleet.example', password: randomBytes(12).toString('base64url') };
  const r = spawnSync(process.execPath, [bin, 'admin', 'create-user', '--data-dir', dataDir, '--org', state.orgId, '--email', login.email, '--role', 'operator', '--json'], {
    input: `${login.password}\n`,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`fleetgw admin create-user failed: ${r.stderr.trim()}`);
  state.login = login;
  writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
}

// Virtual VDA 5050 AGVs (also added to demo data made without them), bound to identities Demo/AGV-n.
const vdaRobotsFile = join(dataDir, 'vda5050-robots.json');
if (VDA_ROBOTS > (state.vdaRobots ?? []).length) {
  state.vdaRobots ??= [];
  for (let i = state.vdaRobots.length + 1; i <= VDA_ROBOTS; i++) {
    const r = admin(['add-robot', '--data-dir', dataDir, '--fleet', state.fleetId, '--name', `agv-${i}`, '--vda5050', `Demo/AGV-${i}`]);
    state.vdaRobots.push(r);
  }
  writeFileSync(stateFile, JSON.stringify(state, null, 2), { mode: 0o600 });
}
writeFileSync(vdaRobotsFile, JSON.stringify((state.vdaRobots ?? []).slice(0, VDA_ROBOTS)), { mode: 0o600 });
const mqttPort = VDA_ROBOTS > 0 ? Number(MQTT_PORT_SET ?? (await freePort())) : null;

const server = spawn(process.execPath, [bin, 'serve', '--data-dir', dataDir, '--port', PORT, '--grpc-port', '0', ...(mqttPort !== null ? ['--vda5050-mqtt-port', String(mqttPort)] : [])], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let sim;
let vdaSim;
const stop = () => {
  sim?.kill('SIGTERM');
  vdaSim?.kill('SIGTERM');
  server.kill('SIGTERM');
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
server.on('exit', (code) => {
  sim?.kill('SIGTERM');
  vdaSim?.kill('SIGTERM');
  process.exitCode = code ?? 0;
});

const lines = createInterface({ input: server.stdout });
lines.on('line', (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    console.log(line);
    return;
  }
  if (msg.event !== 'ready') return;
  sim = spawn(process.execPath, [bin, 'sim', '--grpc', msg.grpc, '--robots-file', join(dataDir, 'robots.json'), '--hz', '10'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (mqttPort !== null) {
    vdaSim = spawn(process.execPath, [bin, 'sim', '--vda5050', '--mqtt', `mqtt://127.0.0.1:${mqttPort}`, '--robots-file', vdaRobotsFile], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  const ca = join(dataDir, 'tls', 'cert.pem');
  const agvs = mqttPort !== null ? ` and ${VDA_ROBOTS} virtual VDA 5050 AGVs on mqtt://127.0.0.1:${mqttPort}` : '';
  console.log(`
fleet-gateway demo is running (${state.robots.length} simulated robots${agvs}, telemetry store: ${msg.telemetryStore})
  Dashboard: ${msg.http}/   (self-signed certificate: ${ca})
  Login:     ${state.login.email}  password: ${state.login.password}

  URL:      ${msg.http}
  gRPC:     ${msg.grpc}
  API key:  ${state.apiKey}
  fleet:    ${state.fleetId}

Try:
  curl --cacert ${ca} -H "Authorization: Bearer ${state.apiKey}" "${msg.http}/v1/robots?fleet_id=${state.fleetId}"

Stop a robot:
  curl --cacert ${ca} -H "Authorization: Bearer ${state.apiKey}" -H "Content-Type: application/json" \\
    -d '{"org_id":"${state.orgId}","fleet_id":"${state.fleetId}","action":"stop","robot_id":"${state.robots[0].robotId}","wait_for_ack":true}' \\
    "${msg.http}/v1/agent/control-robot"

Ctrl-C stops the gateway and the robots.`);
});
