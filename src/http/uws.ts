/**
 * The one module that loads uWebSockets.js; everything else imports uWS from here
 * (.dependency-cruiser.mjs, rule `uws-through-facade`).
 *
 * No single uWS distribution on npm covers the Node versions the gateway supports (docs/uws-builds.md):
 * `uws-pack` 20.0.8 has binaries for Node ABIs 108-127 (Node 18-22) built against glibc 2.27, and
 * `@btc-vision/uwebsockets.js` 20.57.0 has ABIs 115-141 (Node 20-25) built against glibc 2.38. The build
 * is chosen here by the running Node's ABI when the process starts: uws-pack wherever it has a binary
 * (it also loads on older Linux distributions), the newer build for Node 24 and later. Both declare the
 * same API (their declaration files differ only in `export` keywords and the `Number` of `filter`'s
 * count; test/http/uws-facade.test.ts compares them), so the type surface is uws-pack's.
 */
// Must run before uWS loads: it sets the header buffer size uWS reads at load time.
import './uws-limits.js';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as UwsApi from 'uWebSockets.js';

export type {
  HttpRequest,
  HttpResponse,
  RecognizedString,
  TemplatedApp,
  WebSocket,
  WebSocketBehavior,
  us_listen_socket,
  us_socket_context_t,
} from 'uWebSockets.js';

/** A uWS distribution the gateway can load. */
export interface UwsBuild {
  /** npm package name (as installed). */
  readonly package: 'uWebSockets.js' | '@btc-vision/uwebsockets.js';
  /** The published package's version (uws-pack's own numbering for uws-pack). */
  readonly version: string;
  /** Short name for logs and the ready line, e.g. `uws-pack@20.0.8`. */
  readonly id: string;
  /** Absolute path of the native binary this process loads. */
  readonly binary: string;
}

/** Highest Node ABI (process.versions.modules) uws-pack 20.0.8 ships a binary for (Node 22). */
export const UWS_PACK_MAX_ABI = 127;

/** Which distribution serves Node ABI `abi` on this platform: uws-pack up to Node 22, the newer build after. */
export function chooseUwsBuild(abi: number): UwsBuild['package'] {
  return abi <= UWS_PACK_MAX_ABI ? 'uWebSockets.js' : '@btc-vision/uwebsockets.js';
}

/** Where `pkg` keeps the binary for this process (each package's loader builds the same name). */
function describe(pkg: UwsBuild['package']): UwsBuild {
  // Neither package exports its package.json; its entry is dist/index.mjs (uws-pack) or at the top.
  const entry = fileURLToPath(import.meta.resolve(pkg));
  const root = pkg === 'uWebSockets.js' ? dirname(dirname(entry)) : dirname(entry);
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const file = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const binary = pkg === 'uWebSockets.js' ? join(root, 'dist', 'bin', file) : join(root, file);
  const id = pkg === 'uWebSockets.js' ? `uws-pack@${version}` : `${pkg}@${version}`;
  return { package: pkg, version, id, binary };
}

/** The build this process loaded. */
export const uwsBuild: UwsBuild = describe(chooseUwsBuild(Number(process.versions.modules)));

// Only the chosen package is imported: the other one's binary may not load here (glibc, ABI). The cast
// is needed only because each declaration file has its own (nominal) ListenOptions enum.
const native: typeof UwsApi = await (uwsBuild.package === 'uWebSockets.js'
  ? import('uWebSockets.js')
  : (import('@btc-vision/uwebsockets.js') as unknown as Promise<typeof UwsApi>)
).catch((err: unknown) => {
  // The packages' own messages list Node versions but not the C library a binary needs.
  throw new Error(
    `uWebSockets.js (${uwsBuild.id}) does not load on Node ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch}): ` +
      'the gateway runs on Node 20 and 22 with glibc 2.34 or later, and on Node 24 and 25 with glibc 2.38 or later (docs/uws-builds.md)',
    { cause: err },
  );
});

export const App = native.App;
export const SSLApp = native.SSLApp;
export const us_listen_socket_close = native.us_listen_socket_close;
export const us_socket_local_port = native.us_socket_local_port;
