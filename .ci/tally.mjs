// Test passes of CI on several Node versions, and their total (the last line CI prints).
//
//   node .ci/tally.mjs run NAME TALLY [vitest args...]   runs vitest on the Node running this script with a
//                                                       JSON report; appends `NAME passed failed skipped` to
//                                                       TALLY; exits 1 if anything failed
//   node .ci/tally.mjs total TALLY LAST_LINE             adds LAST_LINE (`npm test`'s `N passed, N failed`)
//                                                       to the passes in TALLY; prints one line per pass,
//                                                       then `N passed, N failed` over all of them
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const [command, ...args] = process.argv.slice(2);

/** The names of a vitest JSON report's failed tests and of its files that failed to load. */
function failedNames(r) {
  const names = [];
  for (const file of r.testResults ?? []) {
    const rel = String(file.name ?? '').replace(root, '');
    const failed = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const a of failed) names.push(`${rel} > ${a.fullName ?? a.title}`);
    if (failed.length === 0 && file.status === 'failed') names.push(`${rel} (did not load or failed outside a test)`);
  }
  return names;
}

/** Counts of one vitest JSON report; a run that left no report, or ran nothing, counts as one failure. */
function counts(report, status) {
  if (!existsSync(report)) return { passed: 0, failed: 1, skipped: 0, names: ['(no report: vitest did not finish)'] };
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const passed = r.numPassedTests ?? 0;
  // A suite that fails to load has no failed test of its own.
  let failed = (r.numFailedTests ?? 0) || (r.numFailedTestSuites ?? 0);
  if (failed === 0 && (status !== 0 || passed === 0)) failed = 1;
  return { passed, failed, skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0), names: failedNames(r) };
}

if (command === 'run') {
  const [name, tally, ...vitestArgs] = args;
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-ci-pass-'));
  const report = join(dir, 'report.json');
  const res = spawnSync(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...vitestArgs], {
    stdio: 'inherit',
    cwd: root,
  });
  const c = counts(report, res.status);
  rmSync(dir, { recursive: true, force: true });
  appendFileSync(tally, `${name} ${c.passed} ${c.failed} ${c.skipped}\n`);
  // The failures' names go beside the tally, so that the summary CI ends with names them.
  if (c.names.length > 0) appendFileSync(`${tally}.failures`, c.names.map((n) => `${name}: ${n}\n`).join(''));
  console.log(`[${name}] node ${process.version}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
  process.exit(c.failed > 0 ? 1 : 0);
} else if (command === 'total') {
  const [tally, last = ''] = args;
  const rows = existsSync(tally) ? readFileSync(tally, 'utf8').trim().split('\n').filter(Boolean).map((l) => l.split(' ')) : [];
  const m = /^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/.exec(last.trim());
  rows.push(['npm-test', m?.[1] ?? '0', m ? m[2] : '1', m?.[3] ?? '0']);
  const failures = existsSync(`${tally}.failures`) ? readFileSync(`${tally}.failures`, 'utf8').trim() : '';
  if (failures) console.log(`[failed]\n${failures}`);
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const [name, p, f, s] of rows) {
    console.log(`[total] ${name}: ${p} passed, ${f} failed, ${s} skipped`);
    passed += Number(p);
    failed += Number(f);
    skipped += Number(s);
  }
  console.log(skipped > 0 ? `${passed} passed, ${failed} failed, ${skipped} skipped` : `${passed} passed, ${failed} failed`);
  process.exit(failed > 0 ? 1 : 0);
} else {
  console.error('usage: node .ci/tally.mjs run NAME TALLY [vitest args...] | total TALLY LAST_LINE');
  process.exit(2);
}
