/**
 * Delivery signatures (docs/webhooks.md, "Verifying a delivery"): `X-Fleetgw-Signature:
 * sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">` with the webhook's secret, and the timestamp
 * (Unix seconds) in `X-Fleetgw-Timestamp`, so a receiver can refuse replays older than its window.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-fleetgw-signature';
export const TIMESTAMP_HEADER = 'x-fleetgw-timestamp';

/** A new signing secret: 32 random bytes, base64url, prefixed so it is recognisable in a secret scanner. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** The signature header value of `body` sent at `timestampS`. */
export function signDelivery(secret: string, timestampS: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex')}`;
}

/**
 * Checks a signature header in constant time (what a receiver does; the tests use it as one).
 * `toleranceS` bounds the age of the timestamp against `nowS`.
 */
export function verifyDelivery(secret: string, header: string, timestampS: number, body: string, nowS: number, toleranceS = 300): boolean {
  if (!Number.isInteger(timestampS) || Math.abs(nowS - timestampS) > toleranceS) return false;
  const want = Buffer.from(signDelivery(secret, timestampS, body));
  const got = Buffer.from(header);
  return want.length === got.length && timingSafeEqual(want, got);
}
