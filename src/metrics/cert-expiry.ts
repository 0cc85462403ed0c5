/**
 * When the certificate the gateway serves (HTTPS, and the robot link off loopback) stops being valid,
 * for the `fleetgw_tls_certificate_expiry_timestamp_seconds` gauge: an expired certificate turns every
 * robot and client away, and nothing else in the gateway says it is coming.
 */
import { X509Certificate } from 'node:crypto';

/**
 * The notAfter of the first certificate in `pem`, in Unix seconds.
 * @throws Error when `pem` holds no parsable certificate
 */
export function certificateExpirySeconds(pem: Buffer | string): number {
  // validTo is OpenSSL's text ('Nov 25 03:00:00 2028 GMT'), which Date parses; validToDate is Node 22+.
  const ms = Date.parse(new X509Certificate(pem).validTo);
  if (Number.isNaN(ms)) throw new Error('the TLS certificate has no readable notAfter');
  return Math.floor(ms / 1000);
}
