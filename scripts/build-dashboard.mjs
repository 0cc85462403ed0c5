// Bundles the browser dashboard (web/dashboard/) into dist/dashboard/ with esbuild: one script
// (app.js), one stylesheet (app.css: the page's own styles plus Leaflet's and uPlot's) and the images
// those stylesheets name, so the gateway serves every file itself (no CDN). Runs in `npm run build`,
// hence at `npm install` (prepare); the output is not committed.
import { build } from 'esbuild';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const src = join(root, 'web', 'dashboard');
const out = join(root, 'dist', 'dashboard');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
await build({
  entryPoints: { app: join(src, 'src', 'main.ts') },
  bundle: true,
  outdir: out,
  format: 'iife',
  target: ['chrome110', 'firefox110', 'safari16'],
  minify: true,
  sourcemap: false,
  legalComments: 'linked',
  // Images named by Leaflet's stylesheet: files beside the bundle, served under /app/.
  loader: { '.png': 'file', '.svg': 'file' },
  assetNames: '[name]-[hash]',
  publicPath: '/app/',
  logLevel: 'warning',
});
for (const file of ['index.html', 'favicon.svg']) await copyFile(join(src, file), join(out, file));
