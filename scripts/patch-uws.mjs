// Rewrites the three protocol-error responses compiled into the uWebSockets.js binaries the gateway can
// load (uws-pack 20.0.8 and @btc-vision/uwebsockets.js 20.57.0, Linux x86-64; docs/uws-builds.md) from
// HTML to `{error, code}` JSON of the same length. Run by `npm install` (the package's `postinstall`
// script) and by hand: `node scripts/patch-uws.mjs [--check]` (--check: exit 1 unless every binary is
// patched). docs/http-hardening.md.
//
// Why a byte patch: uWS answers HTTP/1.0 (505), header blocks over its buffer (431) and malformed heads
// and framing (400: Content-Length with Transfer-Encoding, a malformed Content-Length, and in 20.57 a
// bare CR or LF, obs-fold, no Host, ...) inside its C++ parser, before any application code runs, with
// fixed strings (HttpErrors.h) and no hook. Its sources are not reachable here, so the strings are
// replaced in place. Both packages compile the same three strings.
//
// Why it is safe, checked on each binary listed in PACKAGES (x86-64 ELF) with readelf and objdump: each
// string occurs once; the only references to the bytes are three R_X86_64_RELATIVE relocations of the
// string_view table `httpErrorResponses` (pointer to each string's first byte, length 174 / 139 / 99 in
// the table), read by the one error path that writes `httpErrorResponses[err]` with that length, then
// shuts the socket down and closes it. Nothing reads the bytes as C strings, and no code address points
// inside them. A replacement of the same length therefore changes exactly what is written on the wire.
//
// The script is strict and idempotent: each package must have the version listed and every binary listed
// must have either its published digest (then it is patched, the result must have the expected digest,
// and it is written through a temporary file and a rename) or the patched digest (nothing to do).
// Anything else, a package missing included, is an error (exit 1, which fails `npm install`): a
// different release needs this script revisited, not a guess. Binaries for other platforms are left as
// published (their layout was not checked); the gateway says at start-up whether the binary it loaded
// is patched (src/http/uws-error-responses.ts).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// --package-dir DIR: patch only that copy of a package (tests use one to see the script refuse unknown bytes).
const dirArg = process.argv.indexOf('--package-dir');
const checkOnly = process.argv.includes('--check');
const say = (line) => process.stderr.write(`fleet-gateway patch-uws: ${line}\n`);

/**
 * Each package patched, by the name in its package.json: where npm installs it, the one version known,
 * the folder of its binaries, and the published and patched SHA-256 of each Linux x86-64 binary.
 */
export const PACKAGES = {
  'uws-pack': {
    installedAs: 'uWebSockets.js',
    version: '20.0.8',
    binDir: 'dist/bin',
    binaries: {
      'uws_linux_x64_108.node': {
        published: 'b67b3254b1acea464bd6f7b58403c260567c31924abeb6a508a9acdc17a40ce9',
        patched: '535ea4394dce8b5599e6c92a53d7ab113b6172b6e44c9e1fd6cdab132ddbf182',
      },
      'uws_linux_x64_115.node': {
        published: '6f8d96d761a64beddb060f1f7f0e617dd293ed127ec1d57507aa561a0083171e',
        patched: '77faaff9b6575dbe9bd3d13accbc5551726566352c81f4e1b030d7555784a51e',
      },
      'uws_linux_x64_120.node': {
        published: 'fcb1172837abd2a2dd130f6c6502f18e9b562a5d88bcc3bcdca5e6e710278080',
        patched: 'fc971e7aae0d27e99234141227dd0a0b7fd4d5fcdf1a6525108d74e632e71939',
      },
      'uws_linux_x64_127.node': {
        published: '8cabc918bbf9a07323e54f89a33882491080b2eb35df0607f473ccdb1f3c31af',
        patched: '7015af1bb048984d5f18b9f8468e85360af567fb8a3c6d652e4d9e21d5d66f5b',
      },
    },
  },
  '@btc-vision/uwebsockets.js': {
    installedAs: '@btc-vision/uwebsockets.js',
    version: '20.57.0',
    binDir: '.',
    binaries: {
      'uws_linux_x64_115.node': {
        published: '5b126ee00bf754b02e97e4c27090365a8562c5820c93f93918ac2212d4503e91',
        patched: 'e532a723f6ff5da96e77b18618cbc64f80e4388f4fcee01858dc6751e245a8eb',
      },
      'uws_linux_x64_127.node': {
        published: '4b55b1f2cb7a7913febbb65a89496412b96af77e838552980092ba6b33723aac',
        patched: 'c0594c9af9aed05379becda1be002e82d6b5792f0e91f8c0ff92e5acbdabeae9',
      },
      'uws_linux_x64_137.node': {
        published: '98128405dba2fb608448e921a979530f70c946a2cc9889c15f2fa70c2d00ab05',
        patched: '62ae2e7d3085db07bae211801b4a328d4cfed52560cbbe29084f71378df2a3d7',
      },
      'uws_linux_x64_141.node': {
        published: '813d788b347c6fd76b779d8932311ec05a044e612b4b83af220f16e6ea789683',
        patched: 'f1a30aeafe951b7abae02ef3dbabc0a87d0bbd6829fa58ab58ac81624ddbe69a',
      },
    },
  },
};

/**
 * The error messages, also declared in src/errors/catalog.ts (uws_http_version, uws_head_too_large,
 * uws_malformed_request; test/http/uws-error-responses.test.ts checks they agree).
 */
export const MESSAGES = {
  505: 'Only HTTP/1.1 is served.',
  431: 'The request head exceeds 65536 bytes or 98 header lines.',
  400: 'Malformed request.',
};

const json = (status) => JSON.stringify({ error: MESSAGES[status], code: 'bad_request' });

/**
 * One response of exactly `size` bytes. What fits is kept in this order: the JSON body and its
 * Content-Type, then Connection: close and Content-Length, then the reason phrase (clients ignore it,
 * RFC 9112 section 4). uWS closes the connection after writing any of these, so a body without
 * Content-Length ends there. The rest is filled with optional whitespace after the Content-Type value
 * (RFC 9112 section 5: OWS around a field value is not part of it).
 */
function response(size, status, reason, withClose, withLength) {
  const body = json(status);
  const head = [`HTTP/1.1 ${status} ${reason}`, 'Content-Type:application/json'];
  if (withClose) head.push('Connection:close');
  if (withLength) head.push(`Content-Length:${Buffer.byteLength(body)}`);
  const text = `${head.join('\r\n')}\r\n\r\n${body}`;
  const pad = size - Buffer.byteLength(text);
  if (pad < 0) throw new Error(`the ${status} response needs ${-pad} more bytes than uWS's ${size}`);
  return text.replace('application/json', `application/json${' '.repeat(pad)}`);
}

/** The published strings (uWS HttpErrors.h) and their replacements, each pair of equal length. */
export const REPLACEMENTS = [
  {
    status: 505,
    from: 'HTTP/1.1 505 HTTP Version Not Supported\r\nConnection: close\r\n\r\n<h1>HTTP Version Not Supported</h1><p>This server does not support HTTP/1.0.</p><hr><i>uWebSockets/20 Server</i>',
    to: response(174, 505, 'HTTP Version Not Supported', true, true),
  },
  {
    status: 431,
    from: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n<h1>Request Header Fields Too Large</h1><hr><i>uWebSockets/20 Server</i>',
    to: response(139, 431, '', false, false),
  },
  {
    status: 400,
    from: 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n<h1>Bad Request</h1><hr><i>uWebSockets/20 Server</i>',
    to: response(99, 400, '', false, false),
  },
];

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');

/** Replaces each `from` (which must occur exactly once) by its `to`; returns a new buffer. */
export function patchBytes(input) {
  const out = Buffer.from(input);
  for (const { status, from, to } of REPLACEMENTS) {
    const a = Buffer.from(from, 'latin1');
    const b = Buffer.from(to, 'latin1');
    if (a.length !== b.length) throw new Error(`the ${status} replacement is ${b.length} bytes, the original ${a.length}`);
    const at = out.indexOf(a);
    if (at < 0 || out.indexOf(a, at + 1) >= 0) throw new Error(`the ${status} response is not found exactly once`);
    b.copy(out, at);
  }
  return out;
}

/** Patches (or with --check verifies) the binaries of the package in `pkgDir`. */
function patchPackage(pkgDir) {
  const manifest = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const known = PACKAGES[manifest.name];
  if (!known) throw new Error(`${pkgDir} holds ${manifest.name}, which this patch does not know: revisit scripts/patch-uws.mjs`);
  if (manifest.version !== known.version) {
    throw new Error(`${manifest.name} is version ${manifest.version}; this patch knows ${known.version} only: revisit scripts/patch-uws.mjs`);
  }
  for (const [name, digest] of Object.entries(known.binaries)) {
    const file = join(pkgDir, known.binDir, name);
    const bytes = readFileSync(file);
    const now = sha256(bytes);
    if (now === digest.patched) continue;
    if (now !== digest.published) throw new Error(`${manifest.name} ${name} has digest ${now}, neither the published nor the patched one`);
    if (checkOnly) throw new Error(`${manifest.name} ${name} is not patched (run node scripts/patch-uws.mjs)`);
    const patched = patchBytes(bytes);
    const after = sha256(patched);
    if (after !== digest.patched) throw new Error(`${manifest.name} ${name}: the patched file has digest ${after}, expected ${digest.patched}`);
    writeFileSync(`${file}.tmp`, patched, { mode: 0o644 });
    renameSync(`${file}.tmp`, file);
    say(`${manifest.name} ${name}: protocol-error responses are JSON now`);
  }
}

function main() {
  if (dirArg > 0) return patchPackage(resolve(process.argv[dirArg + 1] ?? ''));
  for (const { installedAs } of Object.values(PACKAGES)) {
    const dir = join(root, 'node_modules', installedAs);
    if (!existsSync(join(dir, 'package.json'))) throw new Error(`${dir} is missing: the gateway loads it on some Node versions (docs/uws-builds.md)`);
    patchPackage(dir);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (err) {
    say(`FAILED: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
