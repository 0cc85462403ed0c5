/**
 * Bound-parameter reads on a ClickHouse server (bound-query.ts): one HTTP POST whose multipart body
 * carries the parameters as the external table `fleetgw_params` (ClickHouse "external data"; 18.16
 * and modern servers alike). The query goes in the URL's `query` argument (it holds no values), the
 * credentials in an Authorization header (never in the URL).
 */
import { checkBoundQuery, externalDataSql, externalDataTable, parseTabSeparated, PARAMS_TABLE, type BoundQuery, type Rows } from './bound-query.js';

export interface ExternalDataTarget {
  /** `http(s)://host:port`. */
  origin: string;
  database: string;
  username?: string;
  password?: string;
  timeoutMs: number;
}

/**
 * Runs `query` on the server and returns its rows.
 * @throws Error with the server's status and the first line of its message (no credentials, no values)
 */
export async function selectWithExternalData(target: ExternalDataTarget, query: BoundQuery): Promise<Rows> {
  checkBoundQuery(query);
  const table = externalDataTable(query);
  const url = new URL('/', target.origin);
  url.searchParams.set('database', target.database);
  url.searchParams.set('query', `${externalDataSql(query)} FORMAT TabSeparated`);
  url.searchParams.set(`${PARAMS_TABLE}_structure`, table.structure);
  url.searchParams.set(`${PARAMS_TABLE}_format`, 'TabSeparated');
  const form = new FormData();
  form.set(PARAMS_TABLE, new Blob([table.row], { type: 'text/tab-separated-values' }), `${PARAMS_TABLE}.tsv`);
  const headers: Record<string, string> = {};
  if (target.username !== undefined || target.password !== undefined) {
    headers.authorization = `Basic ${Buffer.from(`${target.username ?? 'default'}:${target.password ?? ''}`).toString('base64')}`;
  }
  const res = await fetch(url, { method: 'POST', body: form, headers, signal: AbortSignal.timeout(target.timeoutMs) });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse answered ${res.status}: ${text.split('\n')[0]?.slice(0, 300) ?? ''}`);
  return parseTabSeparated(text);
}
