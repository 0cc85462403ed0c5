// docs/ARCHITECTURE.md's source-tree table must name the real folders of src/ (and only those), so the
// page stays true when folders move.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'ARCHITECTURE.md'), 'utf8');
const tree = doc.slice(doc.indexOf('## Source tree'), doc.indexOf('## Layers'));
/** First cell of each table row, e.g. `src/missions/catalog`. */
const rows = [...tree.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1]!.replace(/\/$/, ''));

const dirs = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => `${dir}/${d.name}`);

describe('docs/ARCHITECTURE.md source tree', () => {
  it('every row names a folder that exists', () => {
    for (const row of rows) expect(existsSync(join(root, row)), row).toBe(true);
  });

  it('every folder of src (and of src/missions) has a row', () => {
    const want = [...dirs('src'), ...dirs('src/missions')];
    for (const dir of want) expect(rows, dir).toContain(dir);
  });
});
