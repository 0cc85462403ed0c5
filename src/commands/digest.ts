/** The audit digest of a command's arguments. */
import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so two equal argument objects written in different
 * key orders have one digest. `undefined` members are dropped, as JSON.stringify does.
 *
 * Iterative (an explicit stack of pending values and literal text), so a deeply nested value cannot
 * overflow the call stack: arguments stored before request bodies were bounded may
 * be nested more than a thousand levels deep and must still hash.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item instanceof Text) {
      out.push(item.text);
    } else if (item === null || typeof item !== 'object') {
      out.push(JSON.stringify(item) ?? 'null');
    } else if (Array.isArray(item)) {
      // Pushed in reverse: the stack pops `[`, element 0, `,`, element 1, ... `]`.
      stack.push(CLOSE_ARRAY);
      for (let i = item.length - 1; i >= 0; i--) {
        const v: unknown = item[i];
        stack.push(v === undefined ? NULL : v);
        if (i > 0) stack.push(COMMA);
      }
      stack.push(OPEN_ARRAY);
    } else {
      const obj = item as Record<string, unknown>;
      const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
      stack.push(CLOSE_OBJECT);
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push(obj[keys[i]!]);
        stack.push(new Text(`${JSON.stringify(keys[i])}:`));
        if (i > 0) stack.push(COMMA);
      }
      stack.push(OPEN_OBJECT);
    }
  }
  return out.join('');
}

/** Literal output text on the {@link canonicalJson} stack (never a value to serialize). */
class Text {
  constructor(readonly text: string) {}
}
const OPEN_ARRAY = new Text('[');
const CLOSE_ARRAY = new Text(']');
const OPEN_OBJECT = new Text('{');
const CLOSE_OBJECT = new Text('}');
const COMMA = new Text(',');
const NULL = new Text('null');

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
