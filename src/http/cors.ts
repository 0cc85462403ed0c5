/**
 * Cross-origin requests from browsers (docs/api-conventions.md, "Browsers, caches and rate limits"). Off unless the
 * operator lists origins (FLEETGW_CORS_ORIGINS). Credentials cross origins only as an API key in the
 * Authorization header: session cookies are SameSite=Strict and `Access-Control-Allow-Credentials` is
 * never sent, so another site can never act with a logged-in user's cookie.
 */
import { apiError } from '../errors/catalog.js';
import type { PlainResponse, RequestHeaders } from './types.js';

/** Request headers a cross-origin caller may send. */
const ALLOW_HEADERS = 'authorization, content-type, idempotency-key, if-none-match, traceparent, x-request-id';
/** Response headers a cross-origin caller may read (beyond the CORS-safelisted ones). */
const EXPOSE_HEADERS = 'etag, location, ratelimit, ratelimit-policy, retry-after, x-request-id';
/** How long a browser may cache a preflight answer. */
const MAX_AGE_S = 600;

/** The origins allowed to call the API from a browser, and the headers that say so. */
export class CorsPolicy {
  private readonly origins: ReadonlySet<string>;

  /** @param origins exact origins (`https://ops.example.com:8443`), already validated (parseCorsOrigins in src/config.ts) */
  constructor(origins: readonly string[]) {
    this.origins = new Set(origins);
  }

  /** Whether this request is a CORS preflight (OPTIONS with an Origin and a requested method). */
  static isPreflight(method: string, headers: RequestHeaders): boolean {
    return method === 'OPTIONS' && headers.origin !== undefined && headers['access-control-request-method'] !== undefined;
  }

  /**
   * Answers a preflight for a path that exists.
   * @param allowed the methods the path serves
   * @throws ApiError 403 `cors_origin_not_allowed` for an origin not on the list
   */
  preflight(origin: string, allowed: readonly string[]): PlainResponse {
    if (!this.origins.has(origin)) throw apiError('cors_origin_not_allowed', { origin: origin.slice(0, 200) });
    const methods = allowed.includes('GET') && !allowed.includes('HEAD') ? [...allowed, 'HEAD'] : allowed;
    return {
      status: 204,
      headers: {
        'access-control-allow-origin': origin,
        'access-control-allow-methods': methods.join(', '),
        'access-control-allow-headers': ALLOW_HEADERS,
        'access-control-max-age': String(MAX_AGE_S),
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      },
      body: '',
    };
  }

  /** Adds the CORS headers of an actual (non-preflight) response, in place. */
  decorate(res: PlainResponse, origin: string | undefined): PlainResponse {
    // Vary on every answer while CORS is on: a cache must not serve one origin's answer to another.
    res.headers.vary = res.headers.vary === undefined ? 'Origin' : `${res.headers.vary}, Origin`;
    if (origin !== undefined && this.origins.has(origin)) {
      res.headers['access-control-allow-origin'] = origin;
      res.headers['access-control-expose-headers'] = EXPOSE_HEADERS;
    }
    return res;
  }
}
