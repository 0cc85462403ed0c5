/**
 * What the documentation names, found by fixed rules so a test can check that it exists.
 *
 * - **Paths**: a word starting with one of {@link PATH_ROOTS} followed by `/` (e.g. `src/api/route.ts`,
 *   `deploy/`, `bench/micro/page-touch.mjs`), anywhere in the text, not inside a URL. Placeholders
 *   (`<…>`, `{…}`, `*`, `…`, `$`) make a word a pattern, not a path, so it is skipped. A `:line` suffix
 *   is dropped. `path#Name` names a symbol (below); `bench/README.md#anchor` names a heading. A path
 *   may be written from the repository root or from the page's own folder (native-bridge/README.md
 *   names `src/huge_buffer.cc`).
 * - **Relative links**: a Markdown link target that is not a URL or an in-page anchor, resolved from the
 *   page's folder.
 * - **Symbols**: an identifier in backticks (`Name`, `Name()`, `Name.member`) directly followed by
 *   ` (`path`)`, ` (path)` or ` in `path``, or a backticked `path#Name`. The file (or, for a folder, one
 *   of its own `.ts` files) must export `Name`; a `.proto` file must declare it as a message, enum,
 *   service or rpc. A page (`.md`) named beside a name explains it, and a JavaScript global
 *   (`SharedArrayBuffer`) is the platform's: neither is checked. Lower-case snake_case names
 *   (`stop_all`) are wire names, not code: they need only appear in the file.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

export const root = join(import.meta.dirname, '..', '..');

/** Top-level folders whose paths docs name. */
export const PATH_ROOTS = ['src', 'test', 'bench', 'docs', 'deploy', 'proto', 'native-bridge', 'web', 'scripts', 'telemetry'];

/** Folders whose Markdown pages are not checked: lab notes keep their history, dependencies are not ours. */
const UNCHECKED = new Set(['node_modules', 'dist', 'notes', '.git', 'build']);

/**
 * Pages whose paths, symbols and wording are checked (relative to the repository root): docs/*.md,
 * README.md, bench/README.md and every other Markdown page of the repository (folder READMEs), but not
 * the lab notes in bench/notes/, which record what was measured when.
 */
export function checkedPages(dir = '.'): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((d) => {
    const path = dir === '.' ? d.name : `${dir}/${d.name}`;
    if (d.isDirectory()) return UNCHECKED.has(d.name) || d.name.startsWith('.') ? [] : checkedPages(path);
    return d.name.endsWith('.md') ? [path] : [];
  });
}

export interface Reference {
  page: string;
  line: number;
  text: string;
}

const PATH_RE = new RegExp(
  String.raw`(?<![\w./:@-])((?:${PATH_ROOTS.join('|')})/[\w./{}<>*…$@+-]*(?:#[\w-]+)?)`,
  'g',
);
const PLACEHOLDER = /[<>{}*…$]|\.\.\./;

function lines(page: string): string[] {
  return readFileSync(join(root, page), 'utf8').split('\n');
}

/** Strips what sentence punctuation leaves on a path. */
function cleanPath(raw: string): string {
  return raw.replace(/:\d+(-\d+)?$/, '').replace(/[.,;:)]+$/, '');
}

/** Every repository path a page names (see the module comment), with its line. */
export function pathReferences(page: string): Reference[] {
  const out: Reference[] = [];
  lines(page).forEach((text, i) => {
    const noUrls = text.replace(/\bhttps?:\/\/\S+/g, ' ');
    for (const m of noUrls.matchAll(PATH_RE)) {
      const path = cleanPath(m[1]!);
      if (PLACEHOLDER.test(path) || !path.includes('/') || path.endsWith('/.')) continue;
      out.push({ page, line: i + 1, text: path });
    }
  });
  return out;
}

/** Relative Markdown link targets of a page, resolved to repository paths. */
export function linkReferences(page: string): Reference[] {
  const out: Reference[] = [];
  lines(page).forEach((text, i) => {
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue;
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const path = relative(root, join(root, dirname(page), file));
      out.push({ page, line: i + 1, text: anchor ? `${path}#${anchor}` : path });
    }
  });
  return out;
}

export interface SymbolReference extends Reference {
  symbol: string;
  path: string;
}

const IDENT = String.raw`[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?(?:\(\))?`;
const SYMBOL_RES = [
  new RegExp(String.raw`\`(${IDENT})\` \(\`?((?:${PATH_ROOTS.join('|')})/[\w./-]+?)\`?\)`, 'g'),
  new RegExp(String.raw`\`(${IDENT})\` in \`((?:${PATH_ROOTS.join('|')})/[\w./-]+)\``, 'g'),
];
const HASH_RE = new RegExp(String.raw`\`((?:${PATH_ROOTS.join('|')})/[\w./-]+\.[a-z]+)#([A-Za-z_$][\w$]*)\``, 'g');

/** Symbols a page names next to the file that should export them (see the module comment). */
export function symbolReferences(page: string): SymbolReference[] {
  const out: SymbolReference[] = [];
  lines(page).forEach((text, i) => {
    for (const re of SYMBOL_RES) {
      for (const m of text.matchAll(re)) {
        if (/\.(ts|js|mjs|md|proto|json|cc|h)$/.test(m[1]!)) continue; // a file name, not a symbol
        const path = m[2]!.replace(/\/$/, '');
        if (path.endsWith('.md')) continue; // a page that explains it, not its code
        const symbol = m[1]!.replace(/\(\)$/, '').split('.')[0]!;
        if (symbol in globalThis) continue; // a JavaScript global (`SharedArrayBuffer`): the platform's
        out.push({ page, line: i + 1, text: m[0], symbol, path });
      }
    }
    for (const m of text.matchAll(HASH_RE)) out.push({ page, line: i + 1, text: m[0], symbol: m[2]!, path: m[1]! });
  });
  return out;
}

/** The `.ts` sources a path stands for: the file, or a folder's own files. */
function sources(path: string): string[] {
  const abs = join(root, path);
  if (!existsSync(abs)) return [];
  if (!statSync(abs).isDirectory()) return [abs];
  return readdirSync(abs)
    .filter((f) => /\.(ts|tsx|mjs|js|proto)$/.test(f))
    .map((f) => join(abs, f));
}

/** Whether `path` (a file, or a folder's own files) exports `symbol` (snake_case: mentions it). */
export function exportsSymbol(path: string, symbol: string): boolean {
  const esc = symbol.replace(/\$/g, '\\$');
  const wire = /^[a-z0-9_]+$/.test(symbol) && symbol.includes('_');
  const declared = new RegExp(
    String.raw`export\s+(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|const|let|var|class|interface|type|enum|namespace)\s+${esc}\b`,
  );
  const listed = new RegExp(String.raw`export\s+(?:type\s+)?\{[^}]*\b${esc}\b[^}]*\}`);
  const mentioned = new RegExp(String.raw`\b${esc}\b`);
  const protoDeclared = new RegExp(String.raw`^\s*(?:message|enum|service|rpc)\s+${esc}\b`, 'm');
  return sources(path).some((file) => {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.proto')) return protoDeclared.test(text);
    // YAML (alert rules, compose): a named entry such as `alert: Name` or a service key.
    if (/\.ya?ml$/.test(file)) return mentioned.test(text);
    return wire ? mentioned.test(text) : declared.test(text) || listed.test(text);
  });
}

/** GitHub's anchor for a Markdown heading. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Anchors of a Markdown file's headings. */
export function anchors(path: string): Set<string> {
  const text = readFileSync(join(root, path), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** Whether a path a page names exists, from the repository root or from the page's folder. */
export function pageReferenceExists(r: Reference): boolean {
  return referenceExists(r.text) || (dirname(r.page) !== '.' && referenceExists(`${dirname(r.page)}/${r.text}`));
}

/** Whether a referenced path (optionally `file#anchor` or `file#Symbol`) exists. */
export function referenceExists(ref: string): boolean {
  const [path, hash] = ref.split('#') as [string, string | undefined];
  if (!existsSync(join(root, path))) return false;
  if (hash === undefined) return true;
  if (path.endsWith('.md')) return anchors(path).has(hash);
  return exportsSymbol(path, hash);
}

/** Headings of a Markdown file, as written. */
export function headings(path: string): string[] {
  const text = readFileSync(join(root, path), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim());
}

/**
 * Sections cited by title: a Markdown path followed by a quoted title, e.g.
 * `bench/notes/http.md, "The access line's cost"` (the quote may break across lines, also inside a
 * source comment). Each is
 * returned with the line it starts on; a title names a section when a heading of that file contains it.
 */
export function sectionCitations(page: string): Reference[] {
  const text = readFileSync(join(root, page), 'utf8');
  const out: Reference[] = [];
  const re = /((?:bench|docs|src|deploy|web|native-bridge|telemetry)\/[\w./-]+\.md|README\.md),?(?:\s|\*|\/\/)+"([^"]+)"/g;
  for (const m of text.matchAll(re)) {
    const line = text.slice(0, m.index).split('\n').length;
    const title = m[2]!.replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, ' ').replace(/\s+/g, ' ');
    out.push({ page, line, text: `${m[1]}#"${title}"` });
  }
  return out;
}

/** Whether a `file#"title"` citation names a heading of that file. */
export function sectionExists(ref: string): boolean {
  const [, path, title] = /^(.+)#"(.*)"$/.exec(ref) ?? [];
  if (!path || title === undefined || !existsSync(join(root, path))) return false;
  return headings(path).some((h) => h.includes(title));
}

/**
 * History in place of a description: issue, stop, part or item numbers, `#123`-style references and
 * named branches. Each match is returned with its line.
 */
export const HISTORY_RE =
  /\b(?:issues?|stop|parts?|items?) \d+(?:\s*(?:,|and|-)\s*\d+)*\b|(?<![\w&(/#-])#\d+\b(?![-\w])|\bbranch(?:es)? [`'"][^`'"]+[`'"]/gi;

export function historyReferences(page: string): Reference[] {
  const out: Reference[] = [];
  let fenced = false;
  lines(page).forEach((text, i) => {
    if (text.startsWith('```')) fenced = !fenced;
    if (fenced) return;
    for (const m of text.matchAll(HISTORY_RE)) out.push({ page, line: i + 1, text: m[0] });
  });
  return out;
}

/** `path:line: text` lines for a failure message listing every miss at once. */
export function report(refs: Reference[]): string {
  return refs.map((r) => `${r.page}:${r.line}: ${r.text}`).join('\n');
}

/** Every source file under `dir` (`.ts`, `.mjs`, `.cc`, `.h`), at any depth. */
export function sourceFiles(dir = 'src'): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((d) => {
    if (d.isDirectory()) return d.name === 'node_modules' || d.name === 'build' ? [] : sourceFiles(`${dir}/${d.name}`);
    return /\.(ts|mjs|cc|h)$/.test(d.name) ? [`${dir}/${d.name}`] : [];
  });
}
