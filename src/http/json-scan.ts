/**
 * Checks on a JSON body's text that `JSON.parse` cannot make, in one linear pass with no recursion:
 *
 * - duplicate keys in one object: `JSON.parse` silently keeps the last one, so
 *   `{"action":"stop","action":"start"}` would run start;
 * - nesting deeper than {@link MAX_BODY_DEPTH}: deep values overflow the stack of recursive code further
 *   on (msgpack encoding, canonical JSON, digests);
 * - number literals out of the double range (`1e400` parses to Infinity).
 *
 * Hand-written because no library in the tree reports duplicate keys (ajv and TypeBox see the parsed
 * object, where the duplicate is already gone), and because it runs on every JSON body: one pass over
 * the characters, a key set per object, nothing else allocated. It runs after `JSON.parse` succeeded,
 * so the text is known to be valid JSON and the scanner only has to follow its structure.
 */

/** Deepest nesting of objects and arrays a request body may have (the body itself is level 1). */
export const MAX_BODY_DEPTH = 64;

/** A run of string characters with no quote and no backslash (sticky: matches at lastIndex). */
const PLAIN_RUN = /[^"\\]*/y;

/** Keys kept in a plain array before switching to a Set. */
const SHORT_KEY_LIST = 16;

/** Path segments named in a message; deeper ones are elided. */
const PATH_SEGMENTS_SHOWN = 3;

interface Frame {
  /** Keys seen so far (an array while short: cheaper than a Set for the usual handful); null for an array. */
  keys: string[] | Set<string> | null;
  /** The key or index this container sits under in its parent ('' for the body itself). */
  under: string;
  /** Next array index, or the key whose value comes next. */
  index: number;
  key: string;
}

/**
 * Scans valid JSON text.
 * @returns null when the body is acceptable, else a message naming where (`steps.0: duplicate key
 *          'kind'`); the message quotes key text as sent, so callers sanitize it before echoing
 */
export function scanJsonText(text: string): string | null {
  const stack: Frame[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Runs without quote or backslash are skipped by a native regex; an escape skips two characters.
      const start = i + 1;
      let end = start;
      let escaped = false;
      for (;;) {
        PLAIN_RUN.lastIndex = end;
        PLAIN_RUN.test(text);
        end = PLAIN_RUN.lastIndex;
        if (text.charCodeAt(end) !== 0x5c) break;
        escaped = true;
        end += 2;
      }
      const top = stack[stack.length - 1];
      if (top !== undefined && top.keys !== null && isKeyPosition(text, end + 1)) {
        // A key: compare decoded text, so "a" and "\u0061" are the same key.
        const key = escaped ? (JSON.parse(text.slice(start - 1, end + 1)) as string) : text.slice(start, end);
        if (Array.isArray(top.keys)) {
          if (top.keys.includes(key)) return `${where(stack, null)}duplicate key '${key}'`;
          top.keys.push(key);
          if (top.keys.length > SHORT_KEY_LIST) top.keys = new Set(top.keys);
        } else {
          if (top.keys.has(key)) return `${where(stack, null)}duplicate key '${key}'`;
          top.keys.add(key);
        }
        top.key = key;
      }
      i = end + 1;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = stack[stack.length - 1];
      const under = parent === undefined ? '' : parent.keys === null ? String(parent.index) : parent.key;
      stack.push({ keys: c === 0x7b ? [] : null, under, index: 0, key: '' });
      if (stack.length > MAX_BODY_DEPTH) return `${where(stack, null)}nesting deeper than ${MAX_BODY_DEPTH}`;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      i++;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top !== undefined && top.keys === null) top.index++;
      i++;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      let exponent = false;
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x65 || d === 0x45 /* e E */) exponent = true;
        else if (!(d === 0x2b || d === 0x2d || d === 0x2e || (d >= 0x30 && d <= 0x39))) break;
      }
      // Only an exponent or more than 308 digits can leave the double range.
      if ((exponent || i - start > 308) && !Number.isFinite(Number(text.slice(start, i)))) {
        const top = stack[stack.length - 1];
        const at = top === undefined ? null : top.keys === null ? String(top.index) : top.key;
        return `${where(stack, at)}number ${text.slice(start, Math.min(i, start + 24))} is out of range`;
      }
    } else {
      i++;
    }
  }
  return null;
}

/** After a string that ends at `from`, the next non-blank character is `:` when it was a key. */
function isKeyPosition(text: string, from: number): boolean {
  for (let j = from; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x3a) return true;
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return false;
}

/**
 * `a.b.c: ` naming the innermost container (plus `value`, the key or index being read in it, when
 * given); the first {@link PATH_SEGMENTS_SHOWN} segments only; '' at the top level.
 */
function where(stack: Frame[], value: string | null): string {
  const parts: string[] = [];
  for (let f = 1; f < stack.length && parts.length <= PATH_SEGMENTS_SHOWN; f++) parts.push(stack[f]!.under);
  if (value !== null && parts.length <= PATH_SEGMENTS_SHOWN) parts.push(value);
  if (parts.length === 0) return '';
  const shown = parts.length > PATH_SEGMENTS_SHOWN ? `${parts.slice(0, PATH_SEGMENTS_SHOWN).join('.')}…` : parts.join('.');
  return `${shown}: `;
}
