// docs/ARCHITECTURE.md's source-tree table must name the real folders of src/ (and only those, once
// each), every file a row names must exist in that row's folder, and the Layers section must give
// import rules for every top-level module of src/, so the page stays true when files move.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const doc = readFileSync(join(root, 'docs', 'ARCHITECTURE.md'), 'utf8');
const tree = doc.slice(doc.indexOf('## Source tree'), doc.indexOf('## Layers'));
const layers = doc.slice(doc.indexOf('## Layers'), doc.indexOf('### Services with owners'));
/** Table rows of the source tree: the folder (first cell, e.g. `src/missions/catalog`) and all cells. */
const tableRows = [...tree.matchAll(/^\| `([^`]+)`([^\n]*)$/gm)].map((m) => ({
  folder: m[1]!.replace(/\/$/, ''),
  cells: `| \`${m[1]}\`${m[2]}`.split(/(?<!\\)\|/).slice(1, -1),
  text: m[0],
}));
const rows = tableRows.map((r) => r.folder);

const dirs = (dir: string): string[] =>
  readdirSync(join(root, dir), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => `${dir}/${d.name}`);

/** Every file and folder name under `dir`, at any depth. */
const namesUnder = (dir: string): Set<string> => {
  const out = new Set<string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(join(root, d), { withFileTypes: true })) {
      out.add(e.isDirectory() ? `${e.name}/` : e.name);
      if (e.isDirectory() && e.name !== 'node_modules' && e.name !== 'build') walk(`${d}/${e.name}`);
    }
  };
  walk(dir);
  return out;
};

describe('docs/ARCHITECTURE.md source tree', () => {
  it('every row names a folder that exists', () => {
    const missing = rows.filter((row) => !existsSync(join(root, row)));
    expect(missing, `rows naming missing folders: ${missing.join(', ')}`).toEqual([]);
  });

  it('every folder of src (and of src/missions) has a row', () => {
    const want = [...dirs('src'), ...dirs('src/missions')];
    const unlisted = want.filter((dir) => !rows.includes(dir));
    expect(unlisted, `folders without a row: ${unlisted.join(', ')}`).toEqual([]);
  });

  it('each row has two cells and each folder one row', () => {
    const malformed = tableRows.filter((r) => r.cells.length !== 2).map((r) => r.text.slice(0, 80));
    expect(malformed, `rows that are not | folder | concept |:\n${malformed.join('\n')}`).toEqual([]);
    const twice = rows.filter((row, i) => rows.indexOf(row) !== i);
    expect(twice, `folders with more than one row: ${twice.join(', ')}`).toEqual([]);
  });

  it("every file a row names (`name.ts`, `folder/`) exists in that row's folder", () => {
    const missing: string[] = [];
    for (const { folder, cells } of tableRows) {
      const base = folder.replace(/ \(files\)$/, '');
      if (!existsSync(join(root, base))) continue;
      const names = namesUnder(base);
      for (const m of (cells[1] ?? '').matchAll(/`([\w.-]+\.(?:ts|mjs|cc|proto|sql|json)|[\w.-]+\/)`/g)) {
        const name = m[1]!;
        // A pattern such as `foxglove-*.ts` is not a file name; a top-level folder (`proto/`) may be named
        // from any row; a path with a folder is checked by the docs-references test.
        if (!names.has(name) && !(name.endsWith('/') && existsSync(join(root, name)))) missing.push(`${base}: ${name}`);
      }
    }
    expect(missing, `files named in the source tree that do not exist:\n${missing.join('\n')}`).toEqual([]);
  });
});

describe('docs/ARCHITECTURE.md layers', () => {
  it('gives import rules for every top-level module of src (folders and files)', () => {
    const modules = readdirSync(join(root, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory() || d.name.endsWith('.ts'))
      .map((d) => `src/${d.name}`);
    const unlisted = modules.filter((m) => !new RegExp(String.raw`${m.replace('.', '\\.')}(?![\w/-])`).test(layers));
    expect(unlisted, `modules of src missing from the Layers section: ${unlisted.join(', ')}`).toEqual([]);
  });

  it('names only modules that exist', () => {
    const named = [...new Set([...layers.matchAll(/\bsrc\/[\w.-]+/g)].map((m) => m[0]))];
    const missing = named.filter((m) => !existsSync(join(root, m)));
    expect(missing, `modules named in the Layers section that do not exist: ${missing.join(', ')}`).toEqual([]);
  });
});
