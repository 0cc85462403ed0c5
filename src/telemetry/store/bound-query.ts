/**
 * Read queries with bound parameters, identical on every telemetry store (chdb, a modern ClickHouse
 * server, Debian's 18.16). SQL names its values only as `{name:Type}` placeholders; values never
 * enter the SQL text.
 *
 * How each store binds them:
 * - chdb: natively (`Session.queryBindAsync`, the engine's own query parameters).
 * - a ClickHouse server, any version: as a one-row external table (`fleetgw_params`, sent beside the
 *   query in a multipart HTTP request: ClickHouse's "external data", served since long before 18.16,
 *   which has no query parameters). Each placeholder is replaced by a scalar subquery
 *   `(SELECT name FROM fleetgw_params)`, read from the placeholder alone; the values travel in the
 *   external table's rows, typed by its declared structure.
 * So the SQL a caller writes must be valid both ways: use placeholders where a scalar expression may
 * stand (comparisons, function arguments), not as identifiers or in `IN (...)` lists.
 */

/** The parameter types the gateway's queries use. */
export type BoundParam =
  | { type: 'String'; value: string }
  | { type: 'Int64'; value: number }
  | { type: 'Array(String)'; value: readonly string[] }
  | { type: 'Array(Int64)'; value: readonly number[] };

export interface BoundQuery {
  /** SQL with `{name:Type}` placeholders, written as a constant by its module. */
  sql: string;
  params: Readonly<Record<string, BoundParam>>;
}

/** A query's result rows, each a list of TabSeparated fields (unescaped). */
export type Rows = string[][];

/** The name of the external table that carries the parameters to a ClickHouse server. */
export const PARAMS_TABLE = 'fleetgw_params';

const PLACEHOLDER = /\{([a-z_][a-z0-9_]*):([A-Za-z0-9()]+)\}/g;
const NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * Checks that every placeholder names a given parameter of the declared type and every parameter is
 * used; integers must be safe integers.
 * @throws Error naming the placeholder or parameter at fault
 */
export function checkBoundQuery(q: BoundQuery): void {
  const used = new Set<string>();
  for (const m of q.sql.matchAll(PLACEHOLDER)) {
    const [, name, type] = m as unknown as [string, string, string];
    const p = q.params[name];
    if (p === undefined) throw new Error(`query parameter ${name} is not given`);
    if (p.type !== type) throw new Error(`query parameter ${name} is ${p.type}, the SQL says ${type}`);
    used.add(name);
  }
  for (const [name, p] of Object.entries(q.params)) {
    if (!NAME.test(name)) throw new Error(`query parameter name ${name} is not an identifier`);
    if (!used.has(name)) throw new Error(`query parameter ${name} is not used`);
    const ints = p.type === 'Int64' ? [p.value] : p.type === 'Array(Int64)' ? p.value : [];
    for (const n of ints) if (!Number.isSafeInteger(n)) throw new Error(`query parameter ${name} must hold safe integers`);
  }
}

/** The parameters as chdb binds them (`{name: value}`). */
export function chdbParams(q: BoundQuery): Record<string, string | number | string[] | number[]> {
  const out: Record<string, string | number | string[] | number[]> = {};
  for (const [name, p] of Object.entries(q.params)) out[name] = Array.isArray(p.value) ? [...(p.value as unknown[])] as string[] | number[] : p.value as string | number;
  return out;
}

/** The SQL for a ClickHouse server: each placeholder becomes a scalar read of the external table. */
export function externalDataSql(q: BoundQuery): string {
  return q.sql.replace(PLACEHOLDER, (_all, name: string) => `(SELECT ${name} FROM ${PARAMS_TABLE})`);
}

/** The external table's structure (`name Type, ...`) and its one TabSeparated row. */
export function externalDataTable(q: BoundQuery): { structure: string; row: string } {
  const entries = Object.entries(q.params);
  return {
    structure: entries.map(([name, p]) => `${name} ${p.type}`).join(', '),
    row: `${entries.map(([, p]) => tsvField(p)).join('\t')}\n`,
  };
}

function tsvEscape(s: string): string {
  return s.replace(/[\\\t\n\r\0']/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r', '\0': '\\0', "'": "\\'" })[c]!);
}

function tsvField(p: BoundParam): string {
  switch (p.type) {
    case 'String':
      return tsvEscape(p.value);
    case 'Int64':
      return String(p.value);
    case 'Array(String)':
      return `[${p.value.map((s) => `'${tsvEscape(s)}'`).join(',')}]`;
    case 'Array(Int64)':
      return `[${p.value.map((n) => String(n)).join(',')}]`;
  }
}

const UNESCAPE: Record<string, string> = { t: '\t', n: '\n', r: '\r', '0': '\0', '\\': '\\', "'": "'", b: '\b', f: '\f' };

/** Parses TabSeparated output into rows of unescaped fields. */
export function parseTabSeparated(text: string): Rows {
  const rows: Rows = [];
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    rows.push(line.split('\t').map((f) => (f.includes('\\') ? f.replace(/\\(.)/g, (_a, c: string) => UNESCAPE[c] ?? c) : f)));
  }
  return rows;
}
