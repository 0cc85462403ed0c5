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

/** Counts of one vitest JSON report; a run that left no report, or ran nothing, counts as one failure. */
function counts(report, status) {
  if (!existsSync(report)) return { passed: 0, failed: 1, skipped: 0 };
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const passed = r.numPassedTests ?? 0;
  // A suite that fails to load has no failed test of its own.
  let failed = (r.numFailedTests ?? 0) || (r.numFailedTestSuites ?? 0);
  if (failed === 0 && (status !== 0 || passed === 0)) failed = 1;
  return { passed, failed, skipped: (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0) };
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
  console.log(`[${name}] node ${process.version}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`);
  process.exit(c.failed > 0 ? 1 : 0);
} else if (command === 'total') {
  const [tally, last = ''] = args;
  const rows = existsSync(tally) ? readFileSync(tally, 'utf8').trim().split('\n').filter(Boolean).map((l) => l.split(' ')) : [];
  const m = /^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/.exec(last.trim());
  rows.push(['npm-test', m?.[1] ?? '0', m ? m[2] : '1', m?.[3] ?? '0']);
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
