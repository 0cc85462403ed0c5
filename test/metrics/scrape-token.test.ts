// The /metrics bearer token file: made once, owner-only, compared by digest.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScrapeToken } from '../../src/metrics/scrape-token.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-token-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadScrapeToken', () => {
  it('creates a missing default file (0600) once and accepts exactly its token', async () => {
    const file = join(dir, 'metrics-token');
    const auth = await loadScrapeToken(file, true);
    const token = readFileSync(file, 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(43);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(auth.allows(`Bearer ${token}`)).toBe(true);
    expect(auth.allows(`bearer ${token}`)).toBe(true);
    expect(auth.allows(`Bearer ${token}x`)).toBe(false);
    expect(auth.allows(token)).toBe(false);
    expect(auth.allows(undefined)).toBe(false);
    // A second start reads the same token.
    await loadScrapeToken(file, true);
    expect(readFileSync(file, 'utf8').trim()).toBe(token);
  });

  it('refuses a missing file the operator named, and a short token, naming the file', async () => {
    await expect(loadScrapeToken(join(dir, 'nope'), false)).rejects.toThrow(/nope/);
    const short = join(dir, 'short');
    writeFileSync(short, 'abc\n');
    await expect(loadScrapeToken(short, false)).rejects.toThrow(/short.*at least 32/);
  });
});
