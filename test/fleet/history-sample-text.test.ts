/**
 * Robot text read back from the history (src/fleet/history/telemetry/samples.ts): a value stored before the
 * ingest bounded it is cut to its bound on a character boundary, as the ingest cuts (never a split
 * character), and a page's byte estimate is never below the JSON the page is written as (UTF-8,
 * escapes of control characters, quotes).
 */
import { describe, expect, it } from 'vitest';
import { HISTORY_FIELDS } from '../../src/fleet/history/telemetry/fields.js';
import { cutUtf8, parseSample, rowBytes } from '../../src/fleet/history/telemetry/samples.js';
import { SAMPLE_FIELDS } from '../../src/telemetry/sample/sample-table.js';

const modeField = HISTORY_FIELDS.find((f) => f.name === 'mode')!;
const modeMax = SAMPLE_FIELDS.find((f) => f.column === modeField.column)!.bound!.maxBytes;

function row(values: Record<string, string>): string[] {
  return HISTORY_FIELDS.map((f) => values[f.name] ?? (f.kind === 'strings' ? '0:' : f.kind === 'string' ? '' : '1'));
}

describe('history text', () => {
  it('cuts a stored value to its bound on a character boundary', () => {
    // What the store returns for an old row: the bound plus a few bytes, the character across the bound whole.
    for (const pad of ['', 'a', 'ab']) {
      const text = cutUtf8(pad + '€'.repeat(modeMax), modeMax + 3);
      const s = parseSample(row({ mode: text }));
      const mode = s.mode as string;
      expect(mode.includes('\uFFFD')).toBe(false);
      expect(Buffer.byteLength(mode)).toBeLessThanOrEqual(modeMax);
      expect(Buffer.byteLength(mode)).toBeGreaterThan(modeMax - 3);
      expect(mode.startsWith(pad)).toBe(true);
    }
    expect(cutUtf8('abc', 2)).toBe('ab');
    expect(cutUtf8('a😀', 4)).toBe('a');
  });

  it('estimates a sample\'s JSON bytes at least as large as they are', () => {
    const nasty = [
      '\u0001'.repeat(modeMax),
      '"\\'.repeat(modeMax / 2),
      '日本'.repeat(modeMax / 6),
      '😀'.repeat(modeMax / 4),
    ];
    for (const mode of nasty) {
      const r = row(Object.fromEntries(HISTORY_FIELDS.filter((f) => f.kind === 'string').map((f) => [f.name, mode])));
      const json = Buffer.byteLength(JSON.stringify(parseSample(r)));
      expect(rowBytes(r), JSON.stringify(mode.slice(0, 4))).toBeGreaterThanOrEqual(json);
    }
    // Many one-character faults: the list's JSON has quotes the stored text does not.
    const faults = HISTORY_FIELDS.find((f) => f.kind === 'strings')!;
    const r = row({ [faults.name]: `64:${Array.from({ length: 64 }, () => 'x').join(',')}` });
    expect(rowBytes(r)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(parseSample(r))));
  });
});
