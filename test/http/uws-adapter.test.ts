/**
 * The uWS adapter through real sockets: error shapes on the wire, body limits, clients that vanish
 * mid-body or mid-handler, and HTTPS with the self-signed certificate.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { createRouter } from '../../src/http/router.js';
import { ensureTlsFiles } from '../../src/http/tls.js';
import type { RouteDef } from '../../src/api/route.js';
import { startHttpServer, type HttpServer } from '../../src/http/uws-adapter.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

const MAX_BODY = 1024;
let dir: string;
let store: Store;
let server: HttpServer;
const aborted: string[] = [];
let releaseSlow: (() => void) | null = null;

const routes: RouteDef[] = [
  {
    method: 'POST', path: '/echo', operationId: 'echo', summary: 't', tags: ['t'], auth: 'none',
    body: Type.Object({ text: Type.String() }, { additionalProperties: false }),
    responses: { 200: { description: 'ok' } },
    handler: ({ body }) => ({ status: 200, body }),
  },
  {
    method: 'GET', path: '/slow', operationId: 'slow', summary: 't', tags: ['t'], auth: 'none',
    responses: { 200: { description: 'ok' } },
    handler: ({ aborted: signal }) =>
      new Promise((resolve) => {
        releaseSlow = () => resolve({ status: 200, body: { late: true } });
        signal.addEventListener('abort', () => {
          aborted.push('slow');
          // Answer anyway after the abort: the adapter must drop it without touching the dead response.
          setTimeout(() => {
            resolve({ status: 200, body: { late: true } });
            aborted.push('slow answered');
          }, 10);
        });
      }),
  },
];

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Sends raw bytes and resolves with everything the server sent back before closing. */
function raw(port: number, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(data));
    let out = '';
    sock.on('data', (d) => (out += d.toString()));
    sock.on('close', () => resolve(out));
    sock.on('error', reject);
    setTimeout(() => sock.end(), 500);
  });
}

function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => resolve(sock));
    sock.on('error', reject);
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-uws-'));
  store = openStore(dir);
  const router = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter() });
  server = await startHttpServer({ host: '127.0.0.1', port: 0, tls: null, handle: router, maxBodyBytes: MAX_BODY });
});
afterAll(async () => {
  server.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('errors on the wire have the {error, code} shape', () => {
  it('unknown route, bad method, malformed JSON, wrong content type', async () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const notFound = await fetch(`${server.url}/nope`);
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('content-type')).toBe('application/json');
    expect(await notFound.json()).toEqual({ error: 'No route for GET /nope.', code: 'not_found' });

    const badMethod = await fetch(`${server.url}/echo`, { method: 'GET' });
    expect(badMethod.status).toBe(405);
    expect(badMethod.headers.get('allow')).toBe('POST');
    expect(((await badMethod.json()) as { code: string }).code).toBe('bad_request');

    const malformed = await fetch(`${server.url}/echo`, { method: 'POST', body: '{"text":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: 'Request body is not valid JSON.', code: 'bad_request' });

    const wrongType = await fetch(`${server.url}/echo`, { method: 'POST', body: '{"text":"a"}', headers: { 'content-type': 'text/plain' } });
    expect(wrongType.status).toBe(415);

    const ok = await fetch(`${server.url}/echo`, { method: 'POST', body: '{"text":"a"}', headers: { 'content-type': 'application/json' } });
    expect(await ok.json()).toEqual({ text: 'a' });
  });

  it('oversized bodies get 413 before they are read; chunked bodies, large or small, get 411 and a closed connection', async () => {
    const big = JSON.stringify({ text: 'x'.repeat(MAX_BODY) });
    const declared = await raw(
      server.port,
      `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${big.length}\r\n\r\n${big}`,
    );
    expect(declared).toMatch(/^HTTP\/1.1 413 /);
    expect(declared).toContain('"code":"bad_request"');
    expect(declared).toContain(`exceeds ${MAX_BODY} bytes`);

    const chunk = (s: string): string => `${s.length.toString(16)}\r\n${s}\r\n`;
    for (const body of [chunk(big.slice(0, 700)) + chunk(big.slice(700)), chunk('{"text":') + chunk('"hi"}')]) {
      const streamed = await raw(
        server.port,
        `POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body}0\r\n\r\n`,
      );
      expect(streamed).toMatch(/^HTTP\/1.1 411 /);
      expect(streamed).toContain('"code":"bad_request"');
      expect(streamed).not.toContain('"text"');
    }
    expect(server.inFlight()).toBe(0);
  });
});

describe('clients that disconnect', () => {
  it('mid-body: the request is dropped, nothing stays in flight, the server keeps serving', async () => {
    for (let i = 0; i < 20; i++) {
      const sock = await openSocket(server.port);
      sock.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"text":"par');
      await until(() => server.inFlight() === 1, 'the partial request to be in flight');
      sock.destroy();
      await until(() => server.inFlight() === 0, 'the aborted request to be released');
    }
    const ok = await fetch(`${server.url}/echo`, { method: 'POST', body: '{"text":"still here"}', headers: { 'content-type': 'application/json' } });
    expect(await ok.json()).toEqual({ text: 'still here' });
    expect(server.inFlight()).toBe(0);
  });

  it('mid-handler: the handler sees the abort signal and its late answer is dropped safely', async () => {
    aborted.length = 0;
    const sock = await openSocket(server.port);
    sock.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => server.inFlight() === 1 && releaseSlow !== null, 'the slow handler to start');
    sock.destroy();
    await until(() => aborted.length >= 1, 'the handler to observe the abort');
    await until(() => server.inFlight() === 0, 'the in-flight count to drop');
    await until(() => aborted.includes('slow answered'), 'the handler\'s late answer');
    // The adapter drops the late answer in the turns after the resolve: a later request goes through.
    releaseSlow = null;
    const again = fetch(`${server.url}/slow`);
    await until(() => releaseSlow !== null, 'the second slow handler');
    releaseSlow!();
    expect(await (await again).json()).toEqual({ late: true });
    expect(server.inFlight()).toBe(0);
  });
});

describe('HTTPS', () => {
  it('serves over TLS with the self-signed certificate made in the data dir', async () => {
    const files = await ensureTlsFiles(dir);
    const router = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter() });
    const tlsServer = await startHttpServer({ host: '127.0.0.1', port: 0, tls: files, handle: router });
    try {
      expect(tlsServer.url).toBe(`https://127.0.0.1:${tlsServer.port}`);
      const ca = readFileSync(files.certFile);
      const get = (host: string): Promise<{ status: number; body: string }> =>
        new Promise((resolve, reject) => {
          https
            .get(`https://${host}:${tlsServer.port}/nope`, { ca }, (res) => {
              let body = '';
              res.on('data', (d: Buffer) => (body += d.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
            })
            .on('error', reject);
        });
      // Verified against the certificate as CA, so the SANs (127.0.0.1, localhost) must match.
      const viaIp = await get('127.0.0.1');
      expect(viaIp.status).toBe(404);
      expect(JSON.parse(viaIp.body)).toMatchObject({ code: 'not_found' });
      expect((await get('localhost')).status).toBe(404);
      // Plain HTTP to the TLS port does not get an answer.
      await expect(fetch(`http://127.0.0.1:${tlsServer.port}/nope`)).rejects.toThrow();
    } finally {
      tlsServer.close();
    }
  });
});

describe('shutdown', () => {
  it('stopListening refuses new connections while an in-flight request still completes; close aborts the rest', async () => {
    const router = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter() });
    const s = await startHttpServer({ host: '127.0.0.1', port: 0, tls: null, handle: router });
    releaseSlow = null;
    const pending = fetch(`${s.url}/slow`);
    await until(() => releaseSlow !== null && s.inFlight() === 1, 'the slow request');
    s.stopListening();
    await expect(fetch(`${s.url}/nope`, { headers: { connection: 'close' } })).rejects.toThrow();
    releaseSlow!();
    expect(await (await pending).json()).toEqual({ late: true });
    expect(s.inFlight()).toBe(0);
    s.close();
    s.close(); // idempotent
  });
});
