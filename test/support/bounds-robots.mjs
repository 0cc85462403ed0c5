// Two robots for test/e2e/telemetry-bounds.test.ts, on the built agent (dist/): `big` sends GIANT
// samples whose strings are far over their bounds (one a batch: 1.3 MB, under the robot link's 4 MiB
// message limit), `full` sends WORST samples whose every string sits at its bound (100 a batch).
// Prints `sent` once both have handed over their samples and `command` for every command a robot
// gets (both accept). Argument: JSON {grpc, big, full, tg, tw, giant, worst}.
import { RobotAgent } from '../../dist/agent/index.js';

const o = JSON.parse(process.argv[2]);
const base = (tsMs, i) => ({
  tsMs, latitude: 52 + i * 1e-6, longitude: 5, elevationM: 3, xM: i * 0.1, yM: 0, zM: 0, headingDeg: 90,
  linearMps: 1, angularDps: 0, batteryPercent: 80, voltageV: 48, charging: false,
  mode: 'autonomous', estop: false, mission: null, healthLevel: 2, faults: [], cpuTempC: 40, gpsFix: 4,
});
const giant = (tsMs, i) => ({
  ...base(tsMs, i),
  mode: 'M'.repeat(1_000_000),
  mission: { runId: 'R'.repeat(100_000), missionState: 'S'.repeat(100_000), progressPct: 1, stepIndex: 0, remainingDistanceM: 1, etaS: 1 },
  faults: Array.from({ length: 100 }, (_x, k) => `${k}`.padEnd(1000, 'F')),
});
const worst = (tsMs, i) => ({
  ...base(tsMs, i),
  mode: 'a'.repeat(64),
  mission: { runId: 'r'.repeat(64), missionState: 's'.repeat(64), progressPct: 1, stepIndex: 0, remainingDistanceM: 1, etaS: 1 },
  faults: Array.from({ length: 64 }, (_x, k) => `${k}`.padEnd(64, 'f')),
});
const agent = (c, maxBatchSamples) => {
  const a = new RobotAgent({
    address: o.grpc, robotId: c.robotId, robotToken: c.robotToken, dedicatedConnection: true, maxQueuedSamples: 100_000,
    maxBatchSamples, maxUnackedBytes: 256 * 1024 * 1024,
    onCommand: () => {
      process.stdout.write('command\n');
      return { accept: true };
    },
  });
  a.start();
  return a;
};
const g = agent(o.big, 1);
const w = agent(o.full, 100);
while (!g.connected || !w.connected) await new Promise((r) => setTimeout(r, 20));
g.sendSamples(Array.from({ length: o.giant }, (_x, i) => giant(o.tg + i * 100, i)));
for (let k = 0; k < o.worst; k += 1000) w.sendSamples(Array.from({ length: 1000 }, (_x, i) => worst(o.tw + (k + i) * 10, k + i)));
process.stdout.write('sent\n');
process.on('SIGTERM', () => {
  void Promise.all([g.stop(), w.stop()]).then(() => process.exit(0));
});
