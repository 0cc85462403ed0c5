/**
 * Every response the e2e HTTP helper (`api()` in gateway.ts) receives, kept so that the check in
 * openapi-responses.ts can validate each against the schema `/openapi.json` publishes for its route
 * and status after the test file ran (wired for every test file by openapi-responses.setup.ts).
 * Import-light on purpose: the setup file loads it into every test file, unit tests included.
 */

export interface LoggedResponse {
  base: string;
  method: string;
  /** Path and query, as requested. */
  url: string;
  status: number;
  contentType: string;
  /** The parsed JSON body, or the text when it was not JSON. */
  body: unknown;
}

/** Bound of the log: a test file receiving more than this has the rest counted, not validated. */
export const MAX_LOGGED = 20_000;

const logged: LoggedResponse[] = [];
let dropped = 0;
/** Per gateway base URL: its /openapi.json, fetched while the gateway runs (it may be stopped by the check). */
const documents = new Map<string, Promise<unknown>>();

/**
 * Records one response. The first time a gateway's base is seen its document is fetched; the
 * returned promise settles once it is (the helper awaits it, so a test that stops its gateway right
 * after never races the fetch).
 */
export function logResponse(r: LoggedResponse): Promise<unknown> {
  if (!documents.has(r.base)) {
    // Settled either way: a failed fetch becomes the check's failure, never an unhandled rejection.
    documents.set(r.base, fetch(`${r.base}/openapi.json`).then((res) => res.json(), (err: unknown) => err instanceof Error ? err : new Error(String(err))));
  }
  if (logged.length < MAX_LOGGED) logged.push(r);
  else dropped++;
  return documents.get(r.base)!;
}

/** The responses recorded so far, how many were dropped over the bound, and the documents. */
export function loggedResponses(): { responses: readonly LoggedResponse[]; dropped: number; documents: ReadonlyMap<string, Promise<unknown>> } {
  return { responses: logged, dropped, documents };
}

