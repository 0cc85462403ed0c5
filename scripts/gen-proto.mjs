// Generates src/gen from proto/ with buf + protoc-gen-es. `--check` regenerates into a temp dir and
// fails when the checked-in files differ (CI runs it so the TS never drifts from the proto).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, cpSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
const bin = join(root, 'node_modules', '.bin');
const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };

function files(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else out.push(p);
  }
  return out;
}

const work = mkdtempSync(join(tmpdir(), 'fleetgw-gen-'));
try {
  cpSync(join(root, 'proto'), join(work, 'proto'), { recursive: true });
  writeFileSync(join(work, 'buf.gen.yaml'), readFileSync(join(root, 'buf.gen.yaml')));
  execFileSync('buf', ['generate'], { cwd: work, env, stdio: 'inherit' });
  const fresh = join(work, 'src', 'gen');
  if (check) {
    const want = files(fresh).map((f) => relative(fresh, f)).sort();
    const have = files(join(root, 'src', 'gen')).map((f) => relative(join(root, 'src', 'gen'), f)).sort();
    const differ = want.join() !== have.join() || want.some((f) => !readFileSync(join(fresh, f)).equals(readFileSync(join(root, 'src', 'gen', f))));
    if (differ) {
      console.error('src/gen is out of date with proto/: run `npm run gen` and commit the result.');
      process.exit(1);
    }
    console.log('src/gen matches proto/');
  } else {
    rmSync(join(root, 'src', 'gen'), { recursive: true, force: true });
    cpSync(fresh, join(root, 'src', 'gen'), { recursive: true });
    console.log('generated src/gen');
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
