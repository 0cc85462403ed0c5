// certificateExpirySeconds: the notAfter of a PEM certificate, as the gateway's expiry gauge reports it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureTlsFiles } from '../../src/http/tls.js';
import { certificateExpirySeconds } from '../../src/metrics/cert-expiry.js';

describe('certificateExpirySeconds', () => {
  it('reads the self-signed certificate the gateway makes (valid 825 days)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-cert-expiry-'));
    try {
      const files = await ensureTlsFiles(dir);
      const expiry = certificateExpirySeconds(readFileSync(files.certFile));
      const days = (expiry - Date.now() / 1000) / 86_400;
      expect(days).toBeGreaterThan(824);
      expect(days).toBeLessThanOrEqual(825);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses what is not a certificate', () => {
    expect(() => certificateExpirySeconds('not a certificate')).toThrow();
  });
});
