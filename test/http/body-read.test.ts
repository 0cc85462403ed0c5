/**
 * Reading a request body through real sockets: a body that arrives in pieces reserves memory as it
 * comes (not its whole declared length at once), and must arrive within the body deadline.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type HttpServer } from '../../src/http/uws-adapter.js';
import type { PlainRequest, PlainResponse } from '../../src/http/types.js';

const DEADLINE_MS = 500;
let server: HttpServer;

beforeAll(async () => {
  // Answers the body's length: enough to see what was read.
  const handle = (req: PlainRequest): PlainResponse => ({ status: 200, headers: { 'content-type': 'text/plain' }, body: String(req.body.length) });
  server = await startHttpServer({ host: '127.0.0.1', port: 0, tls: null, handle, bodyDeadlineMs: DEADLINE_MS });
});
afterAll(() => server.close());

function openSocket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sock = connect(server.port, '127.0.0.1', () => resolve(sock));
    sock.on('error', reject);
  });
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const head = (length: number): string => `POST /b HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('a body that arrives in pieces', () => {
  it('is answered 408 and closed when it does not arrive in time, however steadily it trickles', async () => {
    const sock = await openSocket();
    let out = '';
    let closed = false;
    sock.on('data', (d) => (out += d.toString()));
    sock.on('close', () => (closed = true));
    sock.write(`${head(1000)}{"a":`);
    // A byte at a time keeps uWS's idle timer from ever firing.
    const drip = setInterval(() => { if (!sock.destroyed) sock.write(' '); }, 50);
    try {
      await until(() => closed, 'the connection to close');
    } finally {
      clearInterval(drip);
    }
    expect(out).toMatch(/^HTTP\/1.1 408 /);
    expect(out).toContain('"code":"bad_request"');
    expect(out).toContain(`within ${DEADLINE_MS / 1000} s`);
    await until(() => server.inFlight() === 0, 'nothing in flight');
  });

  it('is reassembled whole, and reserves memory as it arrives, not its declared length', async () => {
    const MiB = 1024 * 1024;
    const before = process.memoryUsage().arrayBuffers;
    const socks: Socket[] = [];
    for (let i = 0; i < 20; i++) {
      const sock = await openSocket();
      sock.write(`${head(MiB - 100)}${'x'.repeat(1024)}`);
      socks.push(sock);
    }
    // Head and first piece come in one read: once all 20 are in flight, each has buffered its piece.
    await until(() => server.inFlight() === 20, '20 requests in flight');
    const grown = process.memoryUsage().arrayBuffers - before;
    for (const s of socks) s.destroy();
    // 20 bodies declared at 1 MiB each: reserved up front that would be 20 MiB.
    expect(grown).toBeLessThan(8 * MiB);

    // A body sent in many writes arrives whole.
    const sock = await openSocket();
    let out = '';
    sock.on('data', (d) => (out += d.toString()));
    const length = 300 * 1024;
    sock.write(head(length));
    for (let sent = 0; sent < length; sent += 10_000) sock.write('y'.repeat(Math.min(10_000, length - sent)));
    await until(() => out.includes('\r\n\r\n') && out.endsWith(String(length)), 'the answer');
    expect(out).toMatch(/^HTTP\/1.1 200 /);
    sock.destroy();
  });
});
