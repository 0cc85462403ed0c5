// src/http/uws.ts loads one of two uWS distributions by the running Node's ABI (docs/uws-builds.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chooseUwsBuild, uwsBuild, UWS_PACK_MAX_ABI } from '../../src/http/uws.js';

const modules = new URL('../../node_modules/', import.meta.url).pathname;

/** A declaration file reduced to its API: no comments, `export`/`declare` keywords, blank space or export list. */
function api(file: string): string {
  return readFileSync(modules + file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^export \{[^}]*\};?$/m, '')
    .replace(/\b(export|declare) /g, '')
    .replace(/^type (\w+) = CompressOptions;$/gm, 'var $1: CompressOptions;')
    .replace(/\s+/g, '');
}

describe('the uWS facade', () => {
  it('takes uws-pack up to Node 22 (ABI 127) and the newer build for Node 24 and 25', () => {
    expect(UWS_PACK_MAX_ABI).toBe(127);
    for (const abi of [108, 115, 120, 127]) expect(chooseUwsBuild(abi)).toBe('uWebSockets.js');
    for (const abi of [137, 141]) expect(chooseUwsBuild(abi)).toBe('@btc-vision/uwebsockets.js');
  });

  it('names the build and binary this process loaded', () => {
    const abi = Number(process.versions.modules);
    expect(uwsBuild.package).toBe(chooseUwsBuild(abi));
    expect(uwsBuild.id).toBe(abi <= 127 ? 'uws-pack@20.0.8' : '@btc-vision/uwebsockets.js@20.57.0');
    expect(uwsBuild.binary).toMatch(new RegExp(`/uws_${process.platform}_${process.arch}_${abi}\\.node$`));
  });

  it('both builds declare the same API (but for the Number type of filter()’s count)', () => {
    const pack = api('uWebSockets.js/dist/index.d.mts');
    const newer = api('@btc-vision/uwebsockets.js/index.d.ts').replace('count:Number', 'count:number');
    expect(pack.length).toBeGreaterThan(5_000);
    expect(newer).toBe(pack);
  });
});
