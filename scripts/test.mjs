// `npm test`: builds, makes sure a real ClickHouse server can be started (installs Debian's
// clickhouse-server when missing and allowed), runs every vitest suite and ends with the plain line
// `N passed, N failed` that CI reads. The server itself is started on a free loopback port with a
// temporary data dir by test/support/global-setup.ts and stopped after the run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const ci = process.env.CI === 'true';
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });

function hasClickHouse() {
  return ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server', '/usr/bin/clickhouse'].some((p) => existsSync(p));
}

if (!process.env.FLEETGW_TEST_CLICKHOUSE_URL && !hasClickHouse()) {
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && process.env.FLEETGW_NO_INSTALL !== '1';
  if (canInstall) {
    console.log('[test] clickhouse-server missing: installing Debian packages clickhouse-server, clickhouse-client');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    run('apt-get', ['update', '-q'], { env });
    run('apt-get', ['install', '-y', '-q', 'clickhouse-server', 'clickhouse-client'], { env });
  }
  if (!hasClickHouse()) {
    const msg = '[test] no ClickHouse server available (install clickhouse-server or set FLEETGW_TEST_CLICKHOUSE_URL)';
    if (ci) {
      console.error(`${msg}: failing because CI=true`);
      console.log('0 passed, 1 failed');
      process.exit(1);
    }
    console.warn(`${msg}: ClickHouse-server tests will be skipped`);
  }
}

// The dashboard's browser test drives Debian's Chromium (playwright-core never downloads a browser).
if (!existsSync('/usr/bin/chromium')) {
  const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && process.env.FLEETGW_NO_INSTALL !== '1';
  if (canInstall) {
    console.log('[test] chromium missing: installing Debian package chromium');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    run('apt-get', ['update', '-q'], { env });
    run('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'chromium'], { env });
  }
  if (!existsSync('/usr/bin/chromium')) console.warn(`[test] no /usr/bin/chromium: the dashboard browser test ${ci ? 'fails (CI=true)' : 'is skipped'}`);
}
// The ClickHouse cluster tests (test/telemetry/cluster-store.test.ts) start Debian's ZooKeeper: install
// it the same way (without it they skip, and fail under CI=true).
if (!existsSync('/usr/share/java/zookeeper.jar') && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && process.env.FLEETGW_NO_INSTALL !== '1') {
  console.log('[test] zookeeper missing: installing the Debian package zookeeper');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-q'], { env });
  run('apt-get', ['install', '-y', '-q', 'zookeeper'], { env });
}

// The Python robot conformance test (test/conformance/python-robot.test.ts) needs Debian's grpcio and
// grpc-tools under /usr/bin/python3: install them the same way (without them it skips, and fails under CI=true).
const hasPythonGrpc = () => spawnSync('/usr/bin/python3', ['-c', 'import grpc, grpc_tools.protoc']).status === 0;
if (!hasPythonGrpc() && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && process.env.FLEETGW_NO_INSTALL !== '1') {
  console.log('[test] python3-grpcio or python3-grpc-tools missing: installing the Debian packages');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-q'], { env });
  run('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'python3-grpcio', 'python3-grpc-tools'], { env });
}

const build = run('npm', ['run', '-s', 'build']);
if (build.status !== 0) {
  console.log('0 passed, 1 failed');
  process.exit(1);
}

const outDir = mkdtempSync(join(tmpdir(), 'fleetgw-vitest-'));
const report = join(outDir, 'report.json');
const extra = process.argv.slice(2);
const res = run(join(root, 'node_modules', '.bin', 'vitest'), ['run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra]);

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  passed = r.numPassedTests ?? 0;
  failed = r.numFailedTests ?? 0;
  // A suite that fails to load (syntax error, failing beforeAll) has no failed tests of its own.
  if (failed === 0) failed = r.numFailedTestSuites ?? 0;
  skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
} else {
  failed = 1;
}
rmSync(outDir, { recursive: true, force: true });
if (res.status !== 0 && failed === 0) failed = 1;
if (passed === 0 && failed === 0) failed = 1; // running no test is a failure, not a pass
console.log(skipped > 0 ? `${passed} passed, ${failed} failed, ${skipped} skipped` : `${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
