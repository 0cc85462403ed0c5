// Issue 8 item 7 through the real `fleetgw serve`: HEAD gets the GET answer's status and headers and
// no body, so a keep-alive connection stays in step. Raw sockets: an HTTP client would hide a stray
// body behind a HEAD answer (or fail on it), we read the bytes.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { parseResponses, rawExchange } from '../support/raw-http.js';

const d = makeDataDir('fleetgw-head-');
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

const auth = (): string => `Authorization: Bearer ${d.apiKey}\r\n`;

describe('HEAD', () => {
  it('is served where GET is: same status and headers, Content-Length of the GET body, no body', async () => {
    const get = await api(base, d.apiKey, '/v1/me');
    expect(get.status).toBe(200);
    const getLength = Buffer.byteLength(JSON.stringify(get.body));

    // HEAD then GET on one keep-alive connection: the GET must parse as the second answer.
    const r = await rawExchange(base, [`HEAD /v1/me HTTP/1.1\r\nHost: gw\r\n${auth()}\r\n`, `GET /v1/me HTTP/1.1\r\nHost: gw\r\n${auth()}\r\n`], 600, 100);
    const headEnd = r.text.indexOf('\r\n\r\n') + 4;
    const [head] = parseResponses(r.text.slice(0, headEnd), true);
    expect(head?.status).toBe(200);
    expect(head?.headers['content-type']).toBe('application/json');
    expect(Number(head?.headers['content-length'])).toBe(getLength);
    // Straight after the HEAD answer's blank line comes the GET answer, not a body.
    const [second, ...rest] = parseResponses(r.text.slice(headEnd));
    expect(rest).toEqual([]);
    expect(second?.status).toBe(200);
    expect(JSON.parse(second!.body)).toEqual(get.body);
  });

  it('errors keep their status and headers and lose the body: 405 (Allow), 404, 401', async () => {
    const cases = [
      { path: '/v1/agent/control-robot', status: 405, header: ['allow', 'POST'] },
      { path: '/v1/nowhere', status: 404 },
    ];
    for (const c of cases) {
      const r = await rawExchange(base, [`HEAD ${c.path} HTTP/1.1\r\nHost: gw\r\n${auth()}\r\n`, `GET /v1/me HTTP/1.1\r\nHost: gw\r\n${auth()}\r\n`], 600, 100);
      const headEnd = r.text.indexOf('\r\n\r\n') + 4;
      const [head] = parseResponses(r.text.slice(0, headEnd), true);
      expect(head?.status).toBe(c.status);
      if (c.header) expect(head?.headers[c.header[0]!]).toBe(c.header[1]);
      expect(Number(head?.headers['content-length'])).toBeGreaterThan(0);
      expect(parseResponses(r.text.slice(headEnd)).map((x) => x.status)).toEqual([200]);
    }
    const unauth = await rawExchange(base, `HEAD /v1/me HTTP/1.1\r\nHost: gw\r\n\r\n`, 400);
    expect(unauth.text).toMatch(/^HTTP\/1\.1 401 /);
    expect(unauth.text.endsWith('\r\n\r\n')).toBe(true);
  });

  it('a GET route lists HEAD in Allow', async () => {
    const r = await api(base, d.apiKey, '/v1/me', { method: 'DELETE' });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD']);
  });
});
