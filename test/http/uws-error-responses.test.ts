// The install-time patch that makes uWebSockets.js's own protocol-error answers
// JSON (scripts/patch-uws.mjs). The answers on the wire are tested through `fleetgw serve` in
// test/e2e/http-framing.test.ts and test/e2e/http-errors-json.test.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/errors/catalog.js';
import { uwsErrorBodies } from '../../src/http/uws-error-responses.js';
import { uwsBuild } from '../../src/http/uws.js';
// @ts-expect-error: a plain .mjs build script without type declarations
import * as patch from '../../scripts/patch-uws.mjs';

interface Replacement { status: number; from: string; to: string }
const REPLACEMENTS = patch.REPLACEMENTS as Replacement[];
const MESSAGES = patch.MESSAGES as Record<number, string>;
interface Known { installedAs: string; version: string; binDir: string; binaries: Record<string, { published: string; patched: string }> }
const PACKAGES = patch.PACKAGES as Record<string, Known>;
const BINARIES = PACKAGES['uws-pack']!.binaries;
const patchBytes = patch.patchBytes as (b: Buffer) => Buffer;
const script = new URL('../../scripts/patch-uws.mjs', import.meta.url).pathname;
const pkg = new URL('../../node_modules/uWebSockets.js/', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'fleetgw-patch-uws-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the uWebSockets.js error-response patch', () => {
  it('writes the catalog messages, in the {error, code} shape, each the length of the original', () => {
    expect(MESSAGES[505]).toBe(ERROR_CATALOG.uws_http_version.template);
    expect(MESSAGES[431]).toBe(ERROR_CATALOG.uws_head_too_large.template);
    expect(MESSAGES[400]).toBe(ERROR_CATALOG.uws_malformed_request.template);
    for (const r of REPLACEMENTS) {
      expect(Buffer.byteLength(r.to, 'latin1')).toBe(Buffer.byteLength(r.from, 'latin1'));
      const [head, body] = r.to.split('\r\n\r\n');
      expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${r.status} `));
      expect(head).toMatch(/\r\nContent-Type:application\/json *(\r\n|$)/);
      expect(JSON.parse(body!)).toEqual({ error: MESSAGES[r.status], code: 'bad_request' });
      const length = /Content-Length:(\d+)/.exec(head!)?.[1];
      if (length !== undefined) expect(Number(length)).toBe(Buffer.byteLength(body!));
    }
  });

  it('replaces each original exactly once and refuses bytes it does not know', () => {
    const original = Buffer.from(`xx\0${REPLACEMENTS.map((r) => r.from).join('\0')}\0yy`, 'latin1');
    const out = patchBytes(original);
    expect(out.length).toBe(original.length);
    expect(out.toString('latin1')).toBe(`xx\0${REPLACEMENTS.map((r) => r.to).join('\0')}\0yy`);
    expect(() => patchBytes(out)).toThrow(/not found exactly once/);
    expect(() => patchBytes(Buffer.concat([original, original]))).toThrow(/not found exactly once/);
  });

  it('the installed binaries are patched (npm install ran it), and a second run changes nothing', () => {
    const before = readFileSync(uwsBuild.binary);
    expect(spawnSync(process.execPath, [script, '--check']).status).toBe(0);
    execFileSync(process.execPath, [script]);
    expect(readFileSync(uwsBuild.binary).equals(before)).toBe(true);
  });

  it('knows every Linux x86-64 binary of both uWS packages, and they hold the same three strings', () => {
    for (const known of Object.values(PACKAGES)) {
      const dir = new URL(`../../node_modules/${known.installedAs}/${known.binDir}/`, import.meta.url).pathname;
      const shipped = readdirSync(dir).filter((f) => /^uws_linux_x64_\d+\.node$/.test(f)).sort();
      expect(Object.keys(known.binaries).sort()).toEqual(shipped);
      for (const name of shipped) {
        const bytes = readFileSync(join(dir, name));
        // Patched: each replacement once, no original left.
        for (const r of REPLACEMENTS) {
          expect(bytes.indexOf(Buffer.from(r.to, 'latin1'))).toBeGreaterThanOrEqual(0);
          expect(bytes.indexOf(Buffer.from(r.from, 'latin1'))).toBe(-1);
        }
      }
    }
  });

  it('the gateway sees the binary it loads as patched', async () => {
    expect(await uwsErrorBodies()).toBe('json');
  });

  it('fails loudly on a uws-pack version or a binary it does not know', () => {
    const copy = join(tmp, 'uws');
    mkdirSync(join(copy, 'dist', 'bin'), { recursive: true });
    for (const name of Object.keys(BINARIES)) copyFileSync(join(pkg, 'dist', 'bin', name), join(copy, 'dist', 'bin', name));
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
    writeFileSync(join(copy, 'package.json'), JSON.stringify({ ...manifest, version: '20.0.9' }));
    let run = spawnSync(process.execPath, [script, '--package-dir', copy], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/uws-pack is version 20\.0\.9; this patch knows 20\.0\.8 only/);

    writeFileSync(join(copy, 'package.json'), JSON.stringify(manifest));
    const name = Object.keys(BINARIES)[0]!;
    const bytes = readFileSync(join(copy, 'dist', 'bin', name));
    bytes[0] = bytes[0]! ^ 1;
    writeFileSync(join(copy, 'dist', 'bin', name), bytes);
    run = spawnSync(process.execPath, [script, '--package-dir', copy], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`uws-pack ${name.replaceAll('.', '\\.')} has digest [0-9a-f]{64}, neither the published nor the patched one`));
  });
});
