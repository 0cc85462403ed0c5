// Every file path, link and code symbol docs/*.md, README.md, bench/README.md and the folder READMEs
// name must exist (bench/notes/ is exempt: lab notes record what was measured when), and
// they describe the product as it is: no issue, stop or part numbers, no branch names. Source comments
// that point at a figure (`bench/README.md#section`) must point at a heading that exists. Each test
// lists every miss at once, with its page and line. The rules: test/docs/doc-references.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkedPages,
  exportsSymbol,
  historyReferences,
  linkReferences,
  pageReferenceExists,
  pathReferences,
  referenceExists,
  report,
  root,
  sectionCitations,
  sectionExists,
  sourceFiles,
  symbolReferences,
  type Reference,
} from './doc-references.js';

const pages = checkedPages();

describe('docs name what exists', () => {
  it('every file path named in the docs exists', () => {
    const missing = pages.flatMap(pathReferences).filter((r) => !pageReferenceExists(r));
    expect(missing, `paths named in docs that do not exist:\n${report(missing)}`).toEqual([]);
  });

  it('every relative link in the docs resolves (file and heading)', () => {
    const missing = pages.flatMap(linkReferences).filter((r) => !referenceExists(r.text));
    expect(missing, `links that do not resolve:\n${report(missing)}`).toEqual([]);
  });

  it('every section cited by title (`file.md, "Title"`) is a heading of that file', () => {
    const missing = pages.flatMap(sectionCitations).filter((r) => !sectionExists(r.text));
    expect(missing, `cited sections that are not headings:\n${report(missing)}`).toEqual([]);
  });

  it('every code symbol named beside its file is exported by it', () => {
    const refs = pages.flatMap(symbolReferences);
    expect(refs.length).toBeGreaterThan(10);
    const missing = refs.filter((r) => !exportsSymbol(r.path, r.symbol));
    expect(missing, `symbols not exported by the file named:\n${report(missing)}`).toEqual([]);
  });

  it('source comments (src/, bench/ scripts, the addon) point at figures and notes that exist (`bench/README.md#anchor`, `bench/notes/x.md, "Title"`)', () => {
    const files = [...sourceFiles('src'), ...sourceFiles('bench'), ...sourceFiles('native-bridge/src')];
    const refs: Reference[] = files.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .flatMap((text, i) =>
          [...text.matchAll(/bench\/(?:README\.md#[\w-]+|notes\/[\w-]+\.md)/g)].map((m) => ({ page: file, line: i + 1, text: m[0] })),
        ),
    );
    const missing = refs.filter((r) => !referenceExists(r.text));
    expect(missing, `pointers to missing files or sections:\n${report(missing)}`).toEqual([]);
    const cited = files.flatMap(sectionCitations);
    expect(cited.length).toBeGreaterThan(10);
    const uncited = cited.filter((r) => !sectionExists(r.text));
    expect(uncited, `cited sections that are not headings:\n${report(uncited)}`).toEqual([]);
  });

  it('docs describe the product, not its history (no issue, stop or part numbers, no branch names)', () => {
    const found = pages.flatMap(historyReferences);
    expect(found, `history references:\n${report(found)}`).toEqual([]);
  });
});

describe('the rules find what they should', () => {
  it('recognises paths, symbols and history in a sample', () => {
    expect(referenceExists('src/http/metrics-endpoint.ts#METRICS_PATH')).toBe(true);
    expect(referenceExists('src/http/metrics-endpoint.ts#NoSuchThing')).toBe(false);
    expect(referenceExists('src/no-such-file.ts')).toBe(false);
    expect(referenceExists('bench/README.md#command-latency')).toBe(true);
    expect(referenceExists('bench/README.md#no-such-heading')).toBe(false);
    expect(exportsSymbol('src/http', 'METRICS_PATH')).toBe(true);
  });
});
