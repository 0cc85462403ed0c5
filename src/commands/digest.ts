/** The audit digest of a command's arguments. */
import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so two equal argument objects written in different
 * key orders have one digest. `undefined` members are dropped, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** SHA-256 (lowercase hex) of the canonical JSON of a command's arguments. */
export function argsDigest(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('hex');
}

/** Distinct argument texts whose digest is kept (oldest dropped first). */
const DIGEST_CACHE_ENTRIES = 256;

/**
 * {@link argsDigest} with two caches, because the digest is computed on every command's path. By
 * identity: a bulk request hands every target one shared args object, so a 100-robot stop hashes
 * once (args are never mutated after submit). By JSON text (bounded): single requests bring a new
 * args object each time, mostly with the same content (a stop's reason). The text is only a cache
 * key (key order may differ); the digest is always argsDigest's.
 */
export class DigestCache {
  private readonly byObject = new WeakMap<object, string>();
  private readonly byText = new Map<string, string>();

  of(args: object): string {
    let d = this.byObject.get(args);
    if (d !== undefined) return d;
    const text = JSON.stringify(args);
    d = this.byText.get(text);
    if (d === undefined) {
      d = argsDigest(args);
      if (this.byText.size >= DIGEST_CACHE_ENTRIES) {
        const oldest = this.byText.keys().next();
        if (oldest.done !== true) this.byText.delete(oldest.value);
      }
      this.byText.set(text, d);
    }
    this.byObject.set(args, d);
    return d;
  }
}
