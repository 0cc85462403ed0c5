/** Tiny DOM helpers: elements are built with properties and children, never from HTML strings. */

type Child = Node | string | number | null | undefined | false;
type Props = Record<string, string | number | boolean | ((ev: Event) => void) | undefined>;

/**
 * Creates an element. `on*` function props become listeners, `data-*` become dataset entries,
 * `class` the class name; other props are set as attributes (never `style`: the page's CSP forbids
 * inline styles, classes carry every look).
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (k === 'class') el.className = String(v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

/** Appends children, skipping empty ones. */
export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A number with a fixed count of decimals, or a dash when absent. */
export function num(v: number | null | undefined, digits = 1, unit = ''): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : `${v.toFixed(digits)}${unit}`;
}

/** A time of day from epoch milliseconds, or a dash. */
export function clock(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '–' : new Date(ms).toLocaleTimeString();
}

/** A short form of a UUID for tables (the full id stays in a title). */
export function shortId(id: string): string {
  return id.slice(0, 8);
}
