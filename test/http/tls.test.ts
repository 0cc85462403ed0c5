import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureTlsFiles, isLoopbackHost } from '../../src/http/tls.js';

const dirs: string[] = [];
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'fleetgw-tls-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('ensureTlsFiles', () => {
  it('creates a self-signed certificate for localhost, 127.0.0.1 and ::1 with a private key file mode 0600', async () => {
    const dir = tempDir();
    const files = await ensureTlsFiles(dir);
    expect(files).toEqual({ certFile: join(dir, 'tls', 'cert.pem'), keyFile: join(dir, 'tls', 'key.pem') });
    expect(statSync(files.keyFile).mode & 0o777).toBe(0o600);
    const cert = new X509Certificate(readFileSync(files.certFile));
    expect(cert.subjectAltName).toContain('DNS:localhost');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert.subjectAltName).toMatch(/IP Address:(0:0:0:0:0:0:0:1|::1)/);
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(cert.checkPrivateKey(createPrivateKey(readFileSync(files.keyFile)))).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true); // self-signed
    expect(new Date(cert.validTo).getTime()).toBeGreaterThan(Date.now() + 365 * 86_400_000);
  });

  it('keeps an existing pair on later starts (clients may have pinned it)', async () => {
    const dir = tempDir();
    const first = await ensureTlsFiles(dir);
    const pem = readFileSync(first.certFile, 'utf8');
    const second = await ensureTlsFiles(dir);
    expect(readFileSync(second.certFile, 'utf8')).toBe(pem);
  });

  it('regenerates when one of the two files is missing', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'tls'), { recursive: true });
    writeFileSync(join(dir, 'tls', 'cert.pem'), 'stale');
    const files = await ensureTlsFiles(dir);
    expect(readFileSync(files.certFile, 'utf8')).toContain('BEGIN CERTIFICATE');
  });
});

describe('isLoopbackHost', () => {
  it('accepts only addresses this machine alone can reach', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', '128.0.0.1', 'example.com', '::2', '127.0.0.1.evil.com']) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });
});
