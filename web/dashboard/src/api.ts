/**
 * REST calls with the session cookie. The cookie is HttpOnly (the page never sees it); calls other
 * than GET carry the session's CSRF token (docs/sessions.md), which the page holds in memory only.
 */

/** An error answer of the gateway: `{error, code}` with its status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The REST client of one logged-in page. */
export class Api {
  /** Set after login or from GET /v1/sessions/current; cleared at logout. */
  csrfToken = '';

  /** GET a JSON document. */
  get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    const qs = q.toString();
    return this.call<T>('GET', qs === '' ? path : `${path}?${qs}`);
  }

  /** POST a JSON body, or none (with extra headers, e.g. an Idempotency-Key). */
  post<T>(path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> {
    return this.call<T>('POST', path, body, extra);
  }

  /** PUT a JSON body. */
  put<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>('PUT', path, body);
  }

  /** DELETE a resource. */
  del<T>(path: string): Promise<T> {
    return this.call<T>('DELETE', path);
  }

  private async call<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', ...extra };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && this.csrfToken !== '') headers['x-csrf-token'] = this.csrfToken;
    const res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? null : JSON.stringify(body) });
    const text = await res.text();
    let parsed: unknown = null;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
    }
    // 207 (some robots failed) still carries the per-robot outcomes the page shows.
    if (res.status >= 400) {
      const e = (parsed ?? {}) as { error?: string; code?: string };
      throw new ApiError(res.status, e.code ?? 'error', e.error ?? `${method} ${path}: HTTP ${res.status}`);
    }
    return parsed as T;
  }
}
