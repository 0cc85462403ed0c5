// Node module hooks that run the TypeScript sources directly (registered by scripts that need src/
// without a 15 s `tsc` build first): `.ts` files are transpiled one by one with TypeScript's own
// transpileModule (no type check: `npm run typecheck` does that), and a `./x.js` import from a `.ts`
// file resolves to `./x.ts` when no `.js` exists, as tsc's NodeNext resolution does. Node 20 cannot
// strip types by itself; the project has no other TypeScript runner.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export async function resolve(specifier, context, next) {
  if (context.parentURL?.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const tsUrl = new URL(specifier.slice(0, -3) + '.ts', context.parentURL);
    if (!existsSync(new URL(specifier, context.parentURL)) && existsSync(tsUrl)) return { url: tsUrl.href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const path = fileURLToPath(url);
  const out = ts.transpileModule(await readFile(path, 'utf8'), {
    fileName: path,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true, sourceMap: false },
  });
  return { format: 'module', source: out.outputText, shortCircuit: true };
}
