// Builds the C++ telemetry decoder (native-bridge/) with node-gyp. Run by `npm install` (the package's
// `install` script) and by `npm run build:native`.
//
// Without --strict a failed build is not an error: the gateway then runs the JavaScript decoder
// (same output, more CPU per sample) and says so in its ready line ("telemetryDecoder":"js") and on
// stderr. With --strict (CI, `npm run build:native`) it exits 1.
//
// node-gyp: npm's own copy (npm tells lifecycle scripts where it is in npm_config_node_gyp), else the
// one bundled with the npm next to this node, else `node-gyp` on PATH. Headers: npm's `nodedir`
// setting when set, else the headers installed with this node (<prefix>/include/node), else node-gyp
// downloads them.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, 'native-bridge');
const strict = process.argv.includes('--strict');
const say = (line) => process.stderr.write(`fleet-gateway native-bridge: ${line}\n`);

function nodeGyp() {
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return [process.execPath, fromNpm];
  const prefix = resolve(dirname(process.execPath), '..');
  for (const p of [join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(dirname(process.execPath), 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')]) {
    if (existsSync(p)) return [process.execPath, p];
  }
  return ['node-gyp'];
}

function nodeDirArgs() {
  if (process.env.npm_config_nodedir) return [`--nodedir=${process.env.npm_config_nodedir}`];
  const prefix = resolve(dirname(process.execPath), '..');
  if (existsSync(join(prefix, 'include', 'node', 'node_api.h')) && existsSync(join(prefix, 'include', 'node', 'common.gypi'))) {
    return [`--nodedir=${prefix}`];
  }
  return [];
}

const [cmd, ...pre] = nodeGyp();
const args = [...pre, 'rebuild', ...nodeDirArgs()];
say(`building the C++ telemetry decoder: ${[cmd, ...args].join(' ')} (in native-bridge/)`);
const res = spawnSync(cmd, args, { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
const built = join(dir, 'build', 'Release', 'fleetgw_telemetry.node');
if (res.status === 0 && existsSync(built)) {
  say(`built ${built}`);
  process.exit(0);
}
const why = res.error ? res.error.message : `node-gyp exited with ${res.status ?? res.signal}`;
say(`NOT BUILT (${why}). The gateway will run the JavaScript telemetry decoder instead: same results, more CPU per sample.`);
say('To build it: install g++, make and python3 (and Node headers if node-gyp cannot download them), then `npm run build:native`.');
process.exit(strict ? 1 : 0);
