// Writes the files derived from the project's tables (scripts/derived-files.mjs: the command
// catalog's list, the telemetry DDL). `--check` writes nothing and fails when a checked-in file
// differs (CI runs it with `npm run gen:check`).
import { readFileSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const check = process.argv.includes('--check');
register('./ts-hooks.mjs', import.meta.url);
const { derivedFiles } = await import('./derived-files.mjs');

const read = (p) => {
  try {
    return readFileSync(join(root, p), 'utf8');
  } catch {
    // A derived file not written yet: it differs.
    return null;
  }
};
let files;
try {
  files = await derivedFiles(root);
} catch (e) {
  // A table that cannot be generated from (a view path the schema lacks, ...): the message says which.
  console.error(`npm run gen: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
const stale = [];
for (const { path, text } of files) {
  if (read(path) === text) continue;
  stale.push(path);
  if (!check) writeFileSync(join(root, path), text);
}
if (check && stale.length > 0) {
  console.error(`out of date with their tables: ${stale.join(', ')}: run \`npm run gen\` and commit the result.`);
  process.exit(1);
}
console.log(check ? 'derived files match their tables' : `generated ${stale.length === 0 ? 'nothing new' : stale.join(', ')}`);
