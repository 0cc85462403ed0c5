// Issue 8 item 13 through the real `fleetgw serve`: errors are `{error, code}` JSON, also for large
// header blocks, which uWebSockets.js used to answer itself in HTML past 4 KiB. What uWS answers by
// itself (HTTP/1.0, header blocks over its 64 KiB buffer) is JSON too, written into its binary by
// scripts/patch-uws.mjs; pinned here and documented in docs/http-hardening.md.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { parseResponses, rawExchange, responsesComplete } from '../support/raw-http.js';

const d = makeDataDir('fleetgw-json-errors-');
let gw: RunningGateway;
let base: string;

beforeAll(async () => {
  gw = await startGatewayProcess(d.dataDir);
  base = gw.ready.http;
});
afterAll(async () => {
  await gw.stop();
  rmSync(d.dataDir, { recursive: true, force: true });
});

// Each exchange ends once its answers are in, or the server closed the connection; the 30 s is only
// a bound for a loaded machine.
const getMe = (extra: string): string => `GET /v1/me HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${d.apiKey}\r\n${extra}\r\n`;

describe('large header blocks', () => {
  it('up to 16 KiB of headers is served (uWS alone refused anything over 4 KiB, in HTML)', async () => {
    const r = await rawExchange(base, getMe(`X-Trace: ${'a'.repeat(8000)}\r\n`), 30_000, 0, responsesComplete(1));
    expect(parseResponses(r.text).map((x) => x.status)).toEqual([200]);
  });

  it('over 16 KiB: JSON 431 in the error shape, and the connection keeps serving', async () => {
    const r = await rawExchange(base, [getMe(`X-Trace: ${'a'.repeat(20_000)}\r\n`), getMe('')], 30_000, 150, responsesComplete(2));
    const [big, next] = parseResponses(r.text);
    expect(big?.status).toBe(431);
    expect(big?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(big!.body)).toEqual({ error: 'The request line and headers exceed 16384 bytes.', code: 'bad_request' });
    expect(next?.status).toBe(200);
  });

  it('many small headers count too', async () => {
    const many = Array.from({ length: 40 }, (_, i) => `X-H${i}: ${'b'.repeat(500)}\r\n`).join('');
    const r = await rawExchange(base, getMe(many), 30_000, 0, responsesComplete(1));
    expect(parseResponses(r.text)[0]?.status).toBe(431);
  });
});

describe('what uWebSockets.js answers by itself, in JSON written into its binary (docs/http-hardening.md)', () => {
  it('a header block over 64 KiB, or over 98 header lines: JSON 431 and a closed connection', async () => {
    const many = Array.from({ length: 100 }, (_, i) => `X-H${i}: 1\r\n`).join('');
    for (const extra of [`X-Trace: ${'a'.repeat(70_000)}\r\n`, many]) {
      const r = await rawExchange(base, getMe(extra), 30_000);
      expect(r.closed).toBe(true);
      const [res, ...more] = parseResponses(r.text);
      expect(more).toEqual([]);
      expect(res?.status).toBe(431);
      expect(res?.headers['content-type']).toBe('application/json');
      expect(JSON.parse(res!.body)).toEqual({ error: 'The request head exceeds 65536 bytes or 98 header lines.', code: 'bad_request' });
    }
  });

  it('HTTP/1.0: refused with a JSON 505 and a closed connection', async () => {
    const r = await rawExchange(base, `GET /v1/me HTTP/1.0\r\nHost: gw\r\nAuthorization: Bearer ${d.apiKey}\r\n\r\n`, 30_000);
    expect(r.closed).toBe(true);
    const [res, ...more] = parseResponses(r.text);
    expect(more).toEqual([]);
    expect(res?.status).toBe(505);
    expect(res?.headers['content-type']).toBe('application/json');
    expect(res?.headers.connection).toBe('close');
    expect(JSON.parse(res!.body)).toEqual({ error: 'Only HTTP/1.1 is served.', code: 'bad_request' });
  });
});
