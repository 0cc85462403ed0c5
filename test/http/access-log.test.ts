// The access line written as bytes (the path fleetgw serve uses) must be byte for byte the line pino
// writes from the same request at the same instant: same fields, same order, same escaping.
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loggerOptions } from '../../src/gateway/logger.js';
import { ACCESS_CHUNK_BYTES, accessLog } from '../../src/http/access-log.js';
import type { RequestDoneInfo } from '../../src/http/request-done.js';

function pinoLines(infos: RequestDoneInfo[]): string {
  let out = '';
  const log = pino(loggerOptions('info'), { write: (l: string) => { out += l; } }).child({ component: 'http' });
  const observe = accessLog(log);
  for (const info of infos) observe(info);
  return out;
}

/** The byte path's output, as the chunks the sink received (flushed as an exit path does). */
function byteChunks(infos: RequestDoneInfo[], level: 'info' | 'warn' = 'info'): Buffer[] {
  const chunks: Buffer[] = [];
  const flushes: (() => void)[] = [];
  const log = pino(loggerOptions(level), { write: () => {} }).child({ component: 'http' });
  const observe = accessLog(log, {
    // The sink must copy: the writer reuses its buffer.
    write: (c) => void chunks.push(Buffer.from(c)),
    beforeFlush: (f) => {
      flushes.push(f);
      return () => {};
    },
  });
  for (const info of infos) observe(info);
  for (const f of flushes) f();
  return chunks;
}

// Compared as bytes (one latin1 character per byte): what reaches stderr, pino's line encoded as its
// destination encodes it (a lone surrogate becomes U+FFFD there).
const byteLines = (infos: RequestDoneInfo[], level: 'info' | 'warn' = 'info'): string => Buffer.concat(byteChunks(infos, level)).toString('latin1');
const asBytes = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');

const base: RequestDoneInfo = {
  method: 'GET',
  route: '/v1/robots/{robot_id}',
  status: 200,
  durationMs: 0.1234,
  keyId: '0196b2c3-aaaa-7bbb-8ccc-123456789abc',
  requestId: 'client-req:0001/x+y=',
  traceId: null,
  aborted: false,
};

describe('access line: bytes equal pino', () => {
  // Both paths read the clock: one instant for both, so whole lines compare.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-12-07T04:05:06.789Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const cases: [string, RequestDoneInfo][] = [
    ['an authenticated read', base],
    ['no route, no key', { ...base, route: null, keyId: null, status: 404 }],
    ['a trace id and an aborted request', { ...base, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', aborted: true, status: 499 }],
    ['a POST with a long duration', { ...base, method: 'POST', route: '/v1/agent/control-robot', durationMs: 12345.678 }],
    ['a zero and a negative-zero duration', { ...base, durationMs: -0.01 }],
    ['an odd method token', { ...base, method: "M-SEARCH!#$%&'*+.^_`|~" }],
    ['a method with a quote, a backslash and control characters', { ...base, method: 'G"E\\T\n\r\t\u0000\u001f\u007f', route: null }],
    ['a method with non-ASCII text and a lone surrogate', { ...base, method: 'GÉT\u2028\u2029😀\ud800x' }],
    ['a method as long as a header line', { ...base, method: 'X'.repeat(40_000) }],
    ['a template with a quote and a backslash', { ...base, route: '/v1/"odd"\\{id}' }],
    ['a template past the byte path bound', { ...base, route: `/v1/${'a'.repeat(300)}` }],
    ['non-ASCII key and request ids', { ...base, keyId: 'ключ', requestId: 'zäh' }],
  ];
  for (const [name, info] of cases) {
    it(name, () => {
      const expected = pinoLines([info]);
      expect(expected.endsWith('\n')).toBe(true);
      expect(byteLines([info])).toBe(asBytes(expected));
    });
  }

  it('many lines across chunk boundaries, every kind mixed, stay whole and in order', () => {
    const infos: RequestDoneInfo[] = [];
    for (let i = 0; i < 600; i++) {
      const c = cases[i % cases.length]![1];
      infos.push({ ...c, status: 200 + (i % 300), durationMs: i / 7, requestId: `r-${i}` });
    }
    const chunks = byteChunks(infos);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c[c.length - 1]).toBe(0x0a);
      // A chunk past the gathering size is a single line too long for the buffer, never several.
      if (c.length > 2 * ACCESS_CHUNK_BYTES) expect(c.subarray(0, -1).includes(0x0a)).toBe(false);
    }
    expect(Buffer.concat(chunks).toString('latin1')).toBe(asBytes(pinoLines(infos)));
  });

  it('writes nothing when the level is above info', () => {
    expect(byteLines([base], 'warn')).toBe('');
  });
});
