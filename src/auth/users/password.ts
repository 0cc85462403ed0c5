/**
 * Password hashing with node:crypto scrypt (memory-hard), always asynchronous: the work runs on
 * libuv's thread pool, never on the event loop.
 *
 * Parameters: N = 2^15, r = 8, p = 3, 32-byte output, 16-byte random salt: one of the OWASP Password
 * Storage Cheat Sheet's equivalent scrypt settings (its baseline is N = 2^17, r = 8, p = 1; this one
 * trades memory for time: 128 * N * r = 32 MiB per hash instead of 128 MiB, three times the passes).
 * About 0.2-0.6 s of one pool thread per hash. Logins run at most MAX_CONCURRENT_CHECKS hashes at
 * once (sessions.ts), so memory stays bounded. The parameters are stored with each digest, so raising
 * them later re-hashes nothing: old digests keep verifying with their own.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { PasswordDigest } from './records.js';

export const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_LEN = 32;
const SALT_LEN = 16;
/** Longest password accepted (bytes of UTF-8): bounds the hashing input. */
export const MAX_PASSWORD_BYTES = 1024;
/** Shortest password `fleetgw admin create-user` accepts. */
export const MIN_PASSWORD_CHARS = 12;

function derive(password: string, salt: Uint8Array, N: number, r: number, p: number): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; node's default maxmem (32 MiB) is exactly that at our defaults,
  // which it refuses: allow twice the need.
  const opts: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_LEN, opts, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** A new digest of `password` with a fresh salt. */
export async function hashPassword(password: string): Promise<PasswordDigest> {
  const salt = randomBytes(SALT_LEN);
  const { N, r, p } = SCRYPT_PARAMS;
  const hash = await derive(password, salt, N, r, p);
  return { alg: 'scrypt', N, r, p, salt, hash };
}

/** Whether `password` matches `digest`; the digests are compared in constant time. */
export async function verifyPassword(password: string, digest: PasswordDigest): Promise<boolean> {
  if (Buffer.byteLength(password) > MAX_PASSWORD_BYTES) return false;
  const got = await derive(password, digest.salt, digest.N, digest.r, digest.p);
  return got.length === digest.hash.length && timingSafeEqual(got, digest.hash);
}
