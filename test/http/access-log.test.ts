// The access line formatted by hand (the fast path fleetgw serve uses) must read exactly like the line
// pino writes from the same request: same fields, same order, same values (time aside).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/gateway/logger.js';
import { accessLog } from '../../src/http/access-log.js';
import type { RequestDoneInfo } from '../../src/http/request-done.js';

function pinoLine(info: RequestDoneInfo): string {
  let out = '';
  const log = pino(loggerOptions('info'), { write: (l: string) => { out += l; } }).child({ component: 'http' });
  accessLog(log)(info);
  return out;
}

function fastLine(info: RequestDoneInfo, level: 'info' | 'warn' = 'info'): string {
  let out = '';
  const log = pino(loggerOptions(level), { write: () => {} }).child({ component: 'http' });
  accessLog(log, (l) => { out += l; })(info);
  return out;
}

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

describe('access line: hand-formatted equals pino', () => {
  const cases: [string, RequestDoneInfo][] = [
    ['an authenticated read', base],
    ['no route, no key', { ...base, route: null, keyId: null, status: 404 }],
    ['a trace id and an aborted request', { ...base, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', aborted: true, status: 499 }],
    ['an odd method token and a long duration', { ...base, method: "M-SEARCH!#$%&'*+.^_`|~", durationMs: 12345.678 }],
  ];
  for (const [name, info] of cases) {
    it(name, () => {
      const a = pinoLine(info);
      const b = fastLine(info);
      expect(b.endsWith('\n')).toBe(true);
      const pa = JSON.parse(a) as Record<string, unknown>;
      const pb = JSON.parse(b) as Record<string, unknown>;
      expect(Object.keys(pb)).toEqual(Object.keys(pa));
      expect({ ...pb, time: 0 }).toEqual({ ...pa, time: 0 });
      expect(Number.isNaN(Date.parse(pb.time as string))).toBe(false);
    });
  }
  it('writes nothing when the level is above info', () => {
    expect(fastLine(base, 'warn')).toBe('');
  });
});
