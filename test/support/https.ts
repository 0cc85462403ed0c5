/**
 * GET over HTTPS to a gateway serving its self-signed pair, trusting only that certificate (fetch
 * cannot be given a CA). Used by the tests that run the gateway as deployed: TLS on.
 */
import { request } from 'node:https';
import type { PeerCertificate } from 'node:tls';

export interface HttpsAnswer {
  status: number;
  body: string;
  /** SHA-256 fingerprint of the certificate the server presented. */
  fingerprint256: string;
}

/** `GET url` with `headers`, verifying the server against `ca` (PEM). */
export function httpsGet(url: string, ca: Buffer | string, headers: Record<string, string> = {}): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers, agent: false }, (res) => {
      const cert = (res.socket as unknown as { getPeerCertificate(): PeerCertificate }).getPeerCertificate();
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint256: cert.fingerprint256 }));
    });
    req.on('error', reject);
    req.end();
  });
}
